import type { OutboxerErrorCode } from '../../core/errors.js';

/** MQTT 5 reason codes outboxer reads (OASIS MQTT 5.0, 2.4). Below 0x80 is success; 0x80 and above is failure. */
export const MqttReasonCodes = Object.freeze({
  success: 0x00,
  /** Success with information: the broker stored the message, nobody subscribes to its topic now. */
  noMatchingSubscribers: 0x10,
  unspecifiedError: 0x80,
  malformedPacket: 0x81,
  protocolError: 0x82,
  implementationSpecificError: 0x83,
  unsupportedProtocolVersion: 0x84,
  clientIdentifierNotValid: 0x85,
  badUserNameOrPassword: 0x86,
  notAuthorized: 0x87,
  serverUnavailable: 0x88,
  serverBusy: 0x89,
  banned: 0x8a,
  serverShuttingDown: 0x8b,
  badAuthenticationMethod: 0x8c,
  sessionTakenOver: 0x8e,
  topicNameInvalid: 0x90,
  packetIdentifierInUse: 0x91,
  receiveMaximumExceeded: 0x93,
  packetTooLarge: 0x95,
  messageRateTooHigh: 0x96,
  quotaExceeded: 0x97,
  administrativeAction: 0x98,
  payloadFormatInvalid: 0x99,
  qosNotSupported: 0x9b,
  useAnotherServer: 0x9c,
  serverMoved: 0x9d,
  connectionRateExceeded: 0x9f,
});

const NAMES: Readonly<Record<number, string>> = Object.freeze(
  Object.fromEntries(Object.entries(MqttReasonCodes).map(([name, code]) => [code, name.replace(/[A-Z]/g, (letter) => ` ${letter.toLowerCase()}`)])),
);

/** `0x87 not authorized`: the code as the spec writes it, and its name. */
export function describeReasonCode(code: number): string {
  return `0x${code.toString(16).padStart(2, '0')} ${NAMES[code] ?? 'reason code'}`;
}

/** How a failed PUBACK maps into our codes, and what to tell the operator. */
export interface PubackFailure {
  readonly code: OutboxerErrorCode;
  readonly permanent: boolean;
  /** What it means and the fix, after "the broker refused message <id> on topic <topic> (<reason>)". */
  readonly meaning: string;
}

/**
 * What a PUBACK reason code means for the message: undefined for success (0x00, and 0x10 "no matching
 * subscribers": the broker took the message, it just had no one to give it to).
 */
export function pubackFailure(reasonCode: number): PubackFailure | undefined {
  if (reasonCode < 0x80) return undefined;
  switch (reasonCode) {
    case MqttReasonCodes.notAuthorized:
      // A per-topic ACL: the destination is closed to this relay, like a missing route; other topics keep flowing.
      return {
        code: 'OUTBOXER_UNROUTABLE',
        permanent: false,
        meaning: "this client may not publish on the topic: grant the relay's MQTT user publish rights on it in the broker's ACL",
      };
    case MqttReasonCodes.topicNameInvalid:
      return {
        code: 'OUTBOXER_INVALID_TOPIC',
        permanent: true,
        meaning: 'the broker does not accept this topic name (a broker may restrict topics beyond the MQTT rules): change the topic or the topicPrefix',
      };
    case MqttReasonCodes.packetTooLarge:
      return {
        code: 'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
        permanent: true,
        meaning: "the message is over the broker's limit: lower maxPayloadBytes at enqueue or raise the broker's max_packet_size",
      };
    case MqttReasonCodes.quotaExceeded:
    case MqttReasonCodes.messageRateTooHigh:
      return { code: 'OUTBOXER_RATE_LIMITED', permanent: false, meaning: 'the broker limits how much this client may publish; the message was not stored' };
    case MqttReasonCodes.payloadFormatInvalid:
      return {
        code: 'OUTBOXER_REJECTED',
        permanent: true,
        meaning: 'the broker found the body not to be the UTF-8 text its Payload Format Indicator says it is',
      };
    default:
      return { code: 'OUTBOXER_PUBLISH_FAILED', permanent: false, meaning: 'the message was not stored' };
  }
}

/** How a refused CONNACK maps into our codes: a misconfiguration (no retry mends it) or an outage. */
export function connackFailure(reasonCode: number): { readonly code: OutboxerErrorCode; readonly fix: string } {
  switch (reasonCode) {
    case 0x04: // MQTT 3.1.1 return codes, from a broker that did not speak MQTT 5
    case 0x05:
    case MqttReasonCodes.badUserNameOrPassword:
    case MqttReasonCodes.notAuthorized:
    case MqttReasonCodes.badAuthenticationMethod:
    case MqttReasonCodes.banned:
      return { code: 'OUTBOXER_AUTH_FAILED', fix: 'check the username and password (of the url or the options) and what the broker allows this client' };
    case 0x02:
    case MqttReasonCodes.clientIdentifierNotValid:
      return {
        code: 'OUTBOXER_AUTH_FAILED',
        fix: 'the broker refuses the clientId: set another one (at most 23 letters and digits is what every broker must accept)',
      };
    case 0x01:
    case MqttReasonCodes.unsupportedProtocolVersion:
    case MqttReasonCodes.malformedPacket:
    case MqttReasonCodes.protocolError:
      return {
        code: 'OUTBOXER_WRONG_PROTOCOL',
        fix: 'outboxer speaks MQTT 5: point the url at a broker that does (Mosquitto 1.6 or later, EMQX, HiveMQ, VerneMQ)',
      };
    case MqttReasonCodes.qosNotSupported:
      return {
        code: 'OUTBOXER_WRONG_PROTOCOL',
        fix: 'the broker grants only QoS 0 (Maximum QoS in its CONNACK), and outboxer needs the PUBACK of QoS 1: allow QoS 1 on the broker (Mosquitto: max_qos)',
      };
    default:
      return { code: 'OUTBOXER_BROKER_UNAVAILABLE', fix: 'the broker turned the connection away for now (unavailable, busy, shutting down or moved)' };
  }
}
