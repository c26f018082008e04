import { PublishError } from '../../core/errors.js';
import { scrubSecrets } from '../../core/redact.js';
import type { ResolvedMqttPublisherOptions } from './options.js';
import { connackFailure, describeReasonCode, pubackFailure } from './reason-codes.js';

const MAX_REASON_LENGTH = 300;
const MAYBE_STORED = 'the broker may have stored it; a retry carries the same outbox-id';

/** A short text for a driver error or a broker's reason string, secrets scrubbed. Driver errors never travel as `cause`. */
export function describeDriverError(error: unknown, secrets: readonly string[]): string {
  let text: string;
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    text = typeof code === 'string' && !error.message.includes(code) ? `${code} ${error.message}` : error.message || error.name;
  } else if (typeof error === 'string') text = error;
  else text = `non-error value: ${typeof error}`;
  text = scrubSecrets(text, secrets);
  return text.length > MAX_REASON_LENGTH ? `${text.slice(0, MAX_REASON_LENGTH - 1)}…` : text;
}

/** The MQTT reason code an MQTT.js error carries (CONNACK or PUBACK), if any. */
export function reasonCodeOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** Why a connection attempt failed, as MQTT.js reports it before CONNACK; `reason` is already scrubbed. */
export class ConnectFailure extends Error {
  constructor(
    readonly kind: 'refused' | 'timeout' | 'closed' | 'garbled' | 'network',
    readonly reason: string,
    readonly reasonCode?: number,
  ) {
    super(reason);
    this.name = 'ConnectFailure';
  }
}

/** Sorts what MQTT.js emitted while connecting: a CONNACK refusal, a timeout, bytes that are not MQTT, or the network. */
export function classifyConnectError(error: unknown, secrets: readonly string[]): ConnectFailure {
  if (error instanceof ConnectFailure) return error;
  const reason = describeDriverError(error, secrets);
  const reasonCode = reasonCodeOf(error);
  if (reasonCode !== undefined) return new ConnectFailure('refused', reason, reasonCode);
  if (/connack timeout/i.test(reason)) return new ConnectFailure('timeout', reason);
  const errno = (error as { code?: unknown } | null)?.code;
  // mqtt-packet's parser errors ("Invalid header flag bits ...") carry no errno: the server answered, not in MQTT.
  if (error instanceof Error && typeof errno !== 'string' && /invalid|malformed|packet too short|unknown|wrong|cannot parse/i.test(reason))
    return new ConnectFailure('garbled', reason);
  return new ConnectFailure('network', reason);
}

/**
 * Every PublishError the MQTT publisher raises. Messages name the message id, the MQTT topic and the redacted URL,
 * never a password or a payload. They say what happened, never what comes next: whether a failure is retried or
 * parked is the relay's to say (`publish-failure.ts`).
 */
export function mqttErrors(options: ResolvedMqttPublisherOptions) {
  const { redactedUrl, publishTimeoutMs } = options;
  const refused = (failure: ConnectFailure): PublishError => {
    switch (failure.kind) {
      case 'refused': {
        const code = failure.reasonCode ?? 0x80;
        const { code: ours, fix } = connackFailure(code);
        return new PublishError(
          ours,
          `the MQTT broker at ${redactedUrl} refused the connection with CONNACK ${describeReasonCode(code)} (client id ${options.clientId}): ${fix}`,
        );
      }
      case 'garbled':
        return new PublishError(
          'OUTBOXER_WRONG_PROTOCOL',
          `the server at ${redactedUrl} does not speak MQTT (${failure.reason}): is that the broker's MQTT port (1883, 8883 for mqtts://, or its WebSocket port and path)?`,
        );
      case 'timeout':
        return new PublishError(
          'OUTBOXER_BROKER_UNAVAILABLE',
          `no CONNACK from the MQTT broker at ${redactedUrl} within connectTimeoutMs (${options.connectTimeoutMs} ms)`,
        );
      default:
        return new PublishError('OUTBOXER_BROKER_UNAVAILABLE', `cannot connect to the MQTT broker at ${redactedUrl} (${failure.reason})`);
    }
  };
  return {
    refused,
    connect(id: string, failure: ConnectFailure): PublishError {
      const why = refused(failure);
      return new PublishError(why.code, `message ${id} was not sent: ${why.message}`);
    },
    puback(id: string, topic: string, reasonCode: number, reasonString: string | undefined): PublishError | undefined {
      const failure = pubackFailure(reasonCode);
      if (failure === undefined) return undefined;
      const broker = reasonString === undefined ? '' : `, "${describeDriverError(reasonString, options.secrets)}"`;
      return new PublishError(
        failure.code,
        `the MQTT broker refused message ${id} on topic "${topic}" with PUBACK ${describeReasonCode(reasonCode)}${broker}: ${failure.meaning}`,
        { permanent: failure.permanent },
      );
    },
    tooLarge(id: string, bytes: number, limit: number, whose: string): PublishError {
      return new PublishError(
        'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
        `message ${id} is ${bytes} bytes, over ${whose} of ${limit} bytes; lower maxPayloadBytes at enqueue (leave room for the topic and user properties) or raise the limit`,
        { permanent: true },
      );
    },
    lost(id: string, reason: string): PublishError {
      return new PublishError(
        'OUTBOXER_BROKER_UNAVAILABLE',
        `message ${id} was not confirmed: the connection to the MQTT broker at ${redactedUrl} was lost before its PUBACK (${reason}); ${MAYBE_STORED}`,
      );
    },
    timeout(id: string, stage: 'connecting' | 'window' | 'puback'): PublishError {
      const where = {
        connecting: 'still waiting for a connection',
        window: "still waiting for room in the broker's Receive Maximum",
        puback: 'sent, but the PUBACK never came',
      }[stage];
      return new PublishError(
        'OUTBOXER_PUBLISH_TIMEOUT',
        `no PUBACK from the MQTT broker for message ${id} within publishTimeoutMs (${publishTimeoutMs} ms): ${where}; ${MAYBE_STORED}`,
      );
    },
    closed(id?: string): PublishError {
      return new PublishError(
        'OUTBOXER_CLOSED',
        id === undefined
          ? `the MQTT publisher for ${redactedUrl} is closed`
          : `the MQTT publisher for ${redactedUrl} is closed; message ${id} was not published`,
      );
    },
    unexpected(id: string, reason: string): PublishError {
      return new PublishError('OUTBOXER_PUBLISH_FAILED', `message ${id} was not published to the MQTT broker at ${redactedUrl}: ${reason}`);
    },
  };
}

export type MqttErrors = ReturnType<typeof mqttErrors>;
