import { jetstream } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { bodyOf, headersOf, subjectFor } from '../../src/brokers/nats/wire.js';
import { services } from '../config.js';
import type { BrokerTarget } from '../support/broker-target.js';
import { ceilingMessage, type Workload } from '../support/workload.js';
import { type CeilingRun, windowed } from './ceiling-window.js';

/**
 * NATS JetStream's own ceiling: @nats-io/jetstream publish awaiting each PubAck, the relay's wire form (same
 * subject, headers, Nats-Msg-Id and body) and connection options, at most `window` publishes awaiting their
 * PubAck, no database.
 */
export async function natsCeiling(target: BrokerTarget, workload: Workload, count: number, window: number): Promise<CeilingRun> {
  // The same client options as the library's publisher (which turns async traces off), so the ceiling is the client's best.
  const nc = await natsConnect({ servers: services.natsUrl, noAsyncTraces: true });
  const js = jetstream(nc);
  try {
    return await windowed(count, window, async (n) => {
      const message = ceilingMessage(n, workload);
      await js.publish(subjectFor(message, undefined), bodyOf(message), { msgID: message.id, headers: headersOf(message), timeout: 10_000 });
    });
  } finally {
    await nc.close();
  }
}
