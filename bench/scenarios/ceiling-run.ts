import { rabbitMqCeiling } from '../contenders/broker-ceiling-rabbitmq.js';
import { natsCeiling } from '../contenders/broker-ceiling-nats.js';
import { type BrokerKind, createBrokerTarget } from '../support/broker-target.js';
import { settle } from './relay-session.js';

export interface CeilingMeasure {
  readonly confirmed: number;
  readonly seconds: number;
  readonly perSecond: number;
  /** Messages the broker holds afterwards (should be `confirmed`). */
  readonly stored: number;
}

/** The broker's own ceiling for `count` messages on fresh broker resources, dropped afterwards. */
export async function measureCeiling(
  broker: BrokerKind,
  shape: { keys: number; payloadBytes: number },
  count: number,
  window: number,
): Promise<CeilingMeasure> {
  const target = await createBrokerTarget(broker);
  try {
    const workload = { topic: target.topic, ...shape };
    const run = broker === 'rabbitmq' ? await rabbitMqCeiling(target, workload, count, window) : await natsCeiling(target, workload, count, window);
    const stored = await settle(() => target.stored(), count);
    return { confirmed: run.confirmed, seconds: run.seconds, perSecond: run.confirmed / run.seconds, stored };
  } finally {
    await target.cleanup();
  }
}
