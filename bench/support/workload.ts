import { JSON_CONTENT_TYPE, newMessageId, type OutboxMessage } from '../../src/index.js';

/** What every message of a scenario looks like: one topic, keys spread round-robin, a fixed-size payload. */
export interface Workload {
  readonly topic: string;
  readonly keys: number;
  readonly payloadBytes: number;
}

export const MESSAGE_TYPE = 'bench.event';

export function keyOf(n: number, workload: Workload): string {
  return `k-${n % workload.keys}`;
}

/** Characters of `x` in a payload's `pad`: the payload's JSON text is `payloadBytes` long. */
export function padOf(workload: Workload): number {
  return Math.max(0, workload.payloadBytes - 24);
}

/** The payload as the writers send it. */
export function payloadOf(n: number, workload: Workload): { n: number; pad: string } {
  return { n, pad: 'x'.repeat(padOf(workload)) };
}

/** The same payload built by SQL for bulk loads (jsonb prints `{"n": 1, "pad": "x..."}`). */
export function payloadSql(series: string, workload: Workload): string {
  return `jsonb_build_object('n', ${series}, 'pad', repeat('x', ${padOf(workload)}))`;
}

/** The message a ceiling publishes: the same topic, key, headers and body bytes as a relayed one. */
export function ceilingMessage(n: number, workload: Workload): OutboxMessage {
  return {
    id: newMessageId(),
    seq: String(n),
    topic: workload.topic,
    type: MESSAGE_TYPE,
    key: keyOf(n, workload),
    contentType: JSON_CONTENT_TYPE,
    body: `{"n": ${n}, "pad": "${'x'.repeat(padOf(workload))}"}`,
    headers: {},
    createdAt: new Date(),
    attempts: 1,
    lastError: null,
  };
}
