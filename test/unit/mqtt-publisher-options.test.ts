import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { MQTT_PUBLISHER_DEFAULTS, resolveMqttPublisherOptions, type MqttPublisherOptions } from '../../src/brokers/mqtt/index.js';

const refusal = (input: unknown): { options: readonly string[]; message: string } | undefined => {
  try {
    resolveMqttPublisherOptions(input as MqttPublisherOptions);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).code).toBe('OUTBOXER_INVALID_OPTION');
    return { options: (error as ConfigurationError).options, message: (error as Error).message };
  }
};

describe('MQTT publisher options', () => {
  it('resolves the documented defaults, frozen, with a unique 23-character client id per publisher', () => {
    const a = resolveMqttPublisherOptions({ url: 'mqtt://127.0.0.1:1883' });
    const b = resolveMqttPublisherOptions({ url: 'mqtt://127.0.0.1:1883' });
    expect(Object.isFrozen(a)).toBe(true);
    expect(a).toMatchObject({ ...MQTT_PUBLISHER_DEFAULTS, topicPrefix: undefined, maxMessageBytes: undefined, url: 'mqtt://127.0.0.1:1883' });
    expect(a.clientId).toMatch(/^outboxer[0-9a-f]{15}$/);
    expect(a.clientId).not.toBe(b.clientId);
  });

  it('takes credentials out of the URL, keeps them off the enumerable surface, and shows only the redacted URL', () => {
    const resolved = resolveMqttPublisherOptions({ url: 'mqtts://relay:p%40ss-canary@broker.example:8883' });
    expect(resolved.url).toBe('mqtts://broker.example:8883');
    expect(resolved.redactedUrl).toBe('mqtts://***:***@broker.example:8883');
    expect([resolved.username, resolved.password]).toEqual(['relay', 'p@ss-canary']);
    expect(JSON.stringify(resolved)).not.toContain('canary');
    expect(resolved.secrets).toContain('p@ss-canary');
  });

  it('accepts ws:// and wss:// with a path, and refuses a path on mqtt://, a query, and other schemes', () => {
    expect(resolveMqttPublisherOptions({ url: 'wss://broker.example/mqtt' }).url).toBe('wss://broker.example/mqtt');
    expect(refusal({ url: 'mqtt://broker.example/mqtt' })?.message).toMatch(/a path only for ws/);
    expect(refusal({ url: 'mqtt://broker.example?x=1' })?.options).toEqual(['url']);
    expect(refusal({ url: 'amqp://broker.example' })?.message).toMatch(/must start with mqtt:\/\/, mqtts:\/\/, ws:\/\/ or wss:\/\//);
  });

  it('refuses credentials given twice, a password without a user, and never echoes the password', () => {
    const twice = refusal({ url: 'mqtt://u:secret-canary@h', password: 'other-canary' });
    expect(twice?.options).toEqual(['password']);
    expect(twice?.message).not.toMatch(/canary/);
    expect(refusal({ url: 'mqtt://h', password: 'x' })?.message).toMatch(/needs a username/);
    expect(refusal({ url: 12 })?.message).toBe('mqtt publisher option url: must be a non-empty string');
  });

  it('refuses a topicPrefix MQTT cannot carry and a clientId with a control character, naming the option and an example', () => {
    for (const prefix of ['a/#', '+', '$SYS', 'a//b', '/a', 'a/', 'tab\there']) {
      expect(refusal({ url: 'mqtt://h', topicPrefix: prefix })?.options, prefix).toEqual(['topicPrefix']);
    }
    expect(resolveMqttPublisherOptions({ url: 'mqtt://h', topicPrefix: 'site-7/tenant.a' }).topicPrefix).toBe('site-7/tenant.a');
    expect(refusal({ url: 'mqtt://h', clientId: 'a\nb' })?.message).toMatch(/clientId: .*e\.g\. "orders-relay-1"/);
  });

  it('refuses out-of-range numbers and unknown options by name', () => {
    expect(refusal({ url: 'mqtt://h', publishTimeoutMs: 0 })?.options).toEqual(['publishTimeoutMs']);
    expect(refusal({ url: 'mqtt://h', keepaliveSeconds: 70_000 })?.options).toEqual(['keepaliveSeconds']);
    expect(refusal({ url: 'mqtt://h', maxMessageBytes: 268_435_456 })?.options).toEqual(['maxMessageBytes']);
    expect(refusal({ url: 'mqtt://h', qos: 2 })?.message).toMatch(/option qos: is not an option; known: url, topicPrefix/);
    expect(refusal({ url: 'mqtt://h', logger: console.log })?.options).toEqual(['logger']);
  });
});
