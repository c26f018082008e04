import type { IClientPublishOptions } from 'mqtt';
import { PublishError } from '../../core/errors.js';
import { bodyBytes, type OutboxMessage } from '../../core/message.js';
import { isWellFormed, mqttStringFault, topicLevelsFault } from './mqtt-strings.js';

/** User property names outboxer sets on every MQTT message (compared without case, they win over message headers). */
export const MqttUserProperties = Object.freeze({
  id: 'outbox-id',
  type: 'outbox-type',
  /** Present only when the message has a key. */
  key: 'outbox-key',
});

const OWN_NAMES = new Set<string>(Object.values(MqttUserProperties));

/** One outbox message as an MQTT 5 PUBLISH (QoS 1, retain false). */
export interface MqttPublication {
  readonly topic: string;
  readonly payload: Buffer;
  readonly options: IClientPublishOptions;
  /** Bytes of the whole PUBLISH packet, to hold against the broker's Maximum Packet Size. */
  readonly packetBytes: number;
}

/** The MQTT topic of an outbox topic: `.` becomes `/`, behind the prefix when there is one. */
export function mqttTopicOf(topic: string, prefix: string | undefined): string {
  const levels = topic.replaceAll('.', '/');
  return prefix === undefined ? levels : `${prefix}/${levels}`;
}

/**
 * The MQTT topic for a message, or a permanent OUTBOXER_INVALID_TOPIC for one that MQTT cannot carry or that
 * would have an empty level (a `/` at either end of the topic or of one of its dot-separated parts).
 */
export function topicFor(message: Pick<OutboxMessage, 'id' | 'topic'>, prefix: string | undefined): string {
  const topic = mqttTopicOf(message.topic, prefix);
  const fault = topicLevelsFault(topic);
  if (fault !== undefined) {
    throw new PublishError(
      'OUTBOXER_INVALID_TOPIC',
      `message ${message.id}: topic ${JSON.stringify(message.topic.slice(0, 80))} cannot be published to MQTT: as MQTT topic ${JSON.stringify(topic.slice(0, 120))} it ${fault}`,
      {
        permanent: true,
      },
    );
  }
  return topic;
}

function refuse(message: OutboxMessage, what: string, fault: string): never {
  throw new PublishError('OUTBOXER_INVALID_HEADER', `message ${message.id}: its ${what} ${fault}; it cannot travel as an MQTT 5 user property`, {
    permanent: true,
  });
}

/** Bytes a Variable Byte Integer takes. */
function varintBytes(value: number): number {
  return value < 128 ? 1 : value < 16_384 ? 2 : value < 2_097_152 ? 3 : 4;
}

const utf8 = (text: string): number => 2 + Buffer.byteLength(text);

/**
 * The PUBLISH for a message: the stored body byte for byte, its headers and `outbox-id`, `outbox-type` and
 * `outbox-key` as user properties, the content type in Content Type, and the Payload Format Indicator (UTF-8) only
 * for a JSON text body. Throws a permanent PublishError for what MQTT cannot carry, before anything is sent.
 */
export function toMqttPublication(message: OutboxMessage, prefix: string | undefined): MqttPublication {
  const topic = topicFor(message, prefix);
  const userProperties: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (OWN_NAMES.has(name.toLowerCase())) continue;
    const fault = mqttStringFault(value);
    if (fault !== undefined) refuse(message, `header ${JSON.stringify(name.slice(0, 60))}`, fault);
    userProperties[name] = value;
  }
  const typeFault = mqttStringFault(message.type);
  if (typeFault !== undefined) refuse(message, 'type', typeFault);
  userProperties[MqttUserProperties.id] = message.id;
  userProperties[MqttUserProperties.type] = message.type;
  if (message.key !== null) {
    const keyFault = mqttStringFault(message.key);
    if (keyFault !== undefined) refuse(message, 'key', keyFault);
    userProperties[MqttUserProperties.key] = message.key;
  }
  const contentFault = mqttStringFault(message.contentType);
  if (contentFault !== undefined) refuse(message, 'content type', contentFault);

  const payload = bodyBytes(message.body);
  const textBody = typeof message.body === 'string' && isWellFormed(message.body);
  const properties: NonNullable<IClientPublishOptions['properties']> = { contentType: message.contentType, userProperties };
  if (textBody) properties.payloadFormatIndicator = true;

  let propertyBytes = 1 + utf8(message.contentType) + (textBody ? 2 : 0);
  for (const [name, value] of Object.entries(userProperties)) propertyBytes += 1 + utf8(name) + utf8(value);
  const remaining = utf8(topic) + 2 + varintBytes(propertyBytes) + propertyBytes + payload.length;
  return { topic, payload, options: { qos: 1, retain: false, properties }, packetBytes: 1 + varintBytes(remaining) + remaining };
}
