import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { failureAction } from '../../src/core/publish-failure.js';
import { PublishError } from '../../src/core/errors.js';
import type { Publisher } from '../../src/core/ports.js';
import { createMqttPublisher, MqttReasonCodes, type MqttPublisherOptions } from '../../src/brokers/mqtt/index.js';
import { connackFailure, pubackFailure } from '../../src/brokers/mqtt/reason-codes.js';
import { topicFor } from '../../src/brokers/mqtt/wire.js';
import { describePublisherConformance, testMessage } from '../conformance/publisher-conformance.js';
import { MQTT_URL, mqttHarness, recordTopics, type MqttRecorder } from '../support/mqtt-harness.js';
import { uniqueName } from '../support/services.js';

describePublisherConformance(mqttHarness);

describe('MQTT publisher on the wire', () => {
  const publishers: Publisher[] = [];
  const recorders: MqttRecorder[] = [];
  afterEach(async () => {
    await Promise.all(publishers.splice(0).map((p) => p.close()));
    await Promise.all(recorders.splice(0).map((r) => r.close()));
  });
  const make = (options: Partial<MqttPublisherOptions> = {}): Publisher => {
    const publisher = createMqttPublisher({ url: MQTT_URL, publishTimeoutMs: 5000, ...options });
    publishers.push(publisher);
    return publisher;
  };
  const record = async (filter: string, topicPrefix?: string): Promise<MqttRecorder> => {
    const recorder = await recordTopics(filter, topicPrefix === undefined ? {} : { topicPrefix });
    recorders.push(recorder);
    return recorder;
  };

  it('turns the dots of the topic into MQTT levels, behind the topicPrefix, as QoS 1 without retain', async () => {
    const run = uniqueName('t');
    const recorder = await record(`${run}/#`);
    await make({ topicPrefix: `${run}/tenant-a` }).publish(testMessage('orders.created'));
    await make().publish(testMessage(`${run}.orders.created`));
    const deliveries = await recorder.waitFor(2);
    expect(deliveries.map((d) => d.mqttTopic).sort()).toEqual([`${run}/orders/created`, `${run}/tenant-a/orders/created`]);
    expect(deliveries.map((d) => [d.qos, d.retain])).toEqual([
      [1, false],
      [1, false],
    ]);
  });

  it('sends id, type and key as the user properties outbox-id, outbox-type, outbox-key beside the headers, and the content type in Content Type', async () => {
    const run = uniqueName('t');
    const recorder = await record(`${run}/#`);
    const message = testMessage(`${run}.orders`, {
      headers: { 'correlation-id': 'corr-1', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'Outbox-Id': 'forged' },
    });
    await make().publish(message);
    const [delivery] = await recorder.waitFor(1);
    expect(delivery?.headers).toEqual({
      'correlation-id': 'corr-1',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      'outbox-id': message.id,
      'outbox-type': 'order.created',
      'outbox-key': 'order-1',
    });
    expect(delivery?.contentType).toBe('application/json');
    expect(delivery?.body).toBe(message.body);
  });

  it('sets the Payload Format Indicator only on a JSON text body, never on binary bytes', async () => {
    const run = uniqueName('t');
    const recorder = await record(`${run}/#`);
    const publisher = make();
    await publisher.publish(testMessage(`${run}.json`));
    await publisher.publish(testMessage(`${run}.binary`, { body: Uint8Array.from([0xff, 0xfe, 0]), contentType: 'application/x-protobuf' }));
    const deliveries = await recorder.waitFor(2);
    const byTopic = Object.fromEntries(deliveries.map((d) => [d.mqttTopic.split('/').pop(), d.payloadFormatIndicator]));
    expect(byTopic).toEqual({ json: true, binary: undefined });
  });

  it('mosquitto_sub, a client we did not write, reads topic, user properties, content type and the exact body from a persistent session it left before the publish', async () => {
    const run = uniqueName('t');
    const clientId = run.replaceAll('_', '').slice(0, 23);
    const sub = (args: string[]) =>
      runCommand('mosquitto_sub', [
        '-V',
        'mqttv5',
        '-h',
        '127.0.0.1',
        '-p',
        new URL(MQTT_URL).port || '1883',
        '-i',
        clientId,
        '-q',
        '1',
        '-t',
        `${run}/#`,
        ...args,
      ]);
    // subscribe with a session that outlives the connection (clean start off, expiry 60 s), then go away
    expect((await sub(['-c', '-x', '60', '-E'])).code).toBe(0);
    const message = testMessage(`${run}.orders.created`, { body: '{"total": 12.5, "note":"ünïcode ✓"}', headers: { tenant: 'acme' } });
    await make().publish(message);
    // come back: the broker kept the message in the session; -x 0 ends the session when this run disconnects
    const read = await sub(['-c', '-x', '0', '-C', '1', '-W', '10', '-F', '%t|%q|%r|%C|%F|%x|%P']);
    expect(read.code, read.stderr).toBe(0);
    const [topic, qos, retained, contentType, formatIndicator, hex, userProperties] = read.stdout.trim().split('|');
    expect({ topic, qos, retained, contentType, formatIndicator }).toEqual({
      topic: `${run}/orders/created`,
      qos: '1',
      retained: '0',
      contentType: 'application/json',
      formatIndicator: '1',
    });
    expect(Buffer.from(hex ?? '', 'hex').toString('utf8')).toBe(message.body);
    expect(userProperties?.split(' ')).toEqual(['tenant:acme', `outbox-id:${message.id}`, 'outbox-type:order.created', 'outbox-key:order-1']);
  });

  it('confirms a message nobody subscribes to (Mosquitto stores nothing for it: see the docs on durability)', async () => {
    await expect(make().publish(testMessage(`${uniqueName('t')}.nobody`))).resolves.toBeUndefined();
  });
});

describe('MQTT topics, user properties and reason codes', () => {
  it('refuses, permanently and before sending, topics with an empty level and a prefix-less topic starting with $ or holding a wildcard', () => {
    const refused = (topic: string, prefix?: string) => {
      try {
        topicFor({ id: 'm1', topic }, prefix);
        return undefined;
      } catch (error) {
        return [(error as PublishError).code, (error as PublishError).permanent, failureAction(error)];
      }
    };
    const invalid = ['OUTBOXER_INVALID_TOPIC', true, 'dead'];
    expect(refused('orders.created')).toBeUndefined();
    expect(refused('orders/eu.created', 'tenant-a')).toBeUndefined();
    expect(refused('/orders.created')).toEqual(invalid);
    expect(refused('orders//eu.created')).toEqual(invalid);
    expect(refused('orders/.created')).toEqual(invalid);
    expect(refused('$SYS.broker')).toEqual(invalid);
    expect(refused('orders.+')).toEqual(invalid);
    expect(refused('orders.#')).toEqual(invalid);
    expect(refused('orders.a\u0000b')).toEqual(invalid);
  });

  it('refuses a header value that Mosquitto would close the connection over (a control character), as a dead INVALID_HEADER', async () => {
    const publisher = createMqttPublisher({ url: MQTT_URL });
    try {
      const error = await publisher.publish(testMessage('orders.tab', { headers: { note: 'a\tb' } })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PublishError);
      expect([(error as PublishError).code, failureAction(error)]).toEqual(['OUTBOXER_INVALID_HEADER', 'dead']);
      expect((error as Error).message).toContain('header "note"');
      // nothing was sent: the publisher never even connected
      expect(publisher.connectionState?.()).toBe('connecting');
    } finally {
      await publisher.close();
    }
  });

  it('maps PUBACK reason codes: below 0x80 is success (0x10 "no matching subscribers" included), each failure to what the relay should do', () => {
    const action = (code: number) => {
      const failure = pubackFailure(code);
      return failure === undefined ? 'success' : [failure.code, failureAction(new PublishError(failure.code, 'x', { permanent: failure.permanent }))];
    };
    expect(action(MqttReasonCodes.success)).toBe('success');
    expect(action(MqttReasonCodes.noMatchingSubscribers)).toBe('success');
    expect(action(MqttReasonCodes.unspecifiedError)).toEqual(['OUTBOXER_PUBLISH_FAILED', 'retry']);
    expect(action(MqttReasonCodes.implementationSpecificError)).toEqual(['OUTBOXER_PUBLISH_FAILED', 'retry']);
    expect(action(MqttReasonCodes.notAuthorized)).toEqual(['OUTBOXER_UNROUTABLE', 'pause-topic']);
    expect(action(MqttReasonCodes.topicNameInvalid)).toEqual(['OUTBOXER_INVALID_TOPIC', 'dead']);
    expect(action(MqttReasonCodes.packetIdentifierInUse)).toEqual(['OUTBOXER_PUBLISH_FAILED', 'retry']);
    expect(action(MqttReasonCodes.packetTooLarge)).toEqual(['OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER', 'dead']);
    expect(action(MqttReasonCodes.quotaExceeded)).toEqual(['OUTBOXER_RATE_LIMITED', 'retry']);
    expect(action(MqttReasonCodes.messageRateTooHigh)).toEqual(['OUTBOXER_RATE_LIMITED', 'retry']);
    expect(action(MqttReasonCodes.payloadFormatInvalid)).toEqual(['OUTBOXER_REJECTED', 'dead']);
  });

  it('maps CONNACK refusals: credentials and client id to AUTH_FAILED, protocol to WRONG_PROTOCOL, the rest to an outage', () => {
    const code = (reason: number) => connackFailure(reason).code;
    expect([0x86, 0x87, 0x8a, 0x8c, 0x85, 0x04, 0x05].map(code)).toEqual(Array(7).fill('OUTBOXER_AUTH_FAILED'));
    expect([0x84, 0x81, 0x82, 0x9b, 0x01].map(code)).toEqual(Array(5).fill('OUTBOXER_WRONG_PROTOCOL'));
    expect([0x80, 0x88, 0x89, 0x8b, 0x9c, 0x9d, 0x9f].map(code)).toEqual(Array(7).fill('OUTBOXER_BROKER_UNAVAILABLE'));
  });
});

function runCommand(command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
