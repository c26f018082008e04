import { PublishError } from '../../src/core/errors.js';
import type { OutboxMessage } from '../../src/core/message.js';
import type { Publisher } from '../../src/core/ports.js';
import type { BrokerConnectionState } from '../../src/core/relay-health.js';
import type { Journal } from '../journal.js';
import type { KillPoint } from '../spec.js';

export interface FaultPlan {
  readonly point?: KillPoint | undefined;
  /** The kill fires at the at-th occurrence of its point (1-based). */
  readonly at: number;
}

export function killSelf(journal: Journal, point: string): never {
  journal.write({ e: 'kill-point', point });
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: SIGKILL did not end the process');
}

/**
 * A decorating Publisher for the relay role: journals every send and its outcome (the checker uses them
 * to attribute duplicates), injects transient failures asked for by the payload (`fail`: the first n
 * attempts fail), and kills the process after a publish was sent but before its confirmation came.
 * `verify` and `connectionState` are the inner publisher's when it has them: without them the relay cannot
 * tell that its broker is down (broker trouble, docs/design/lease-protocol.md) and would be tested on another path than the
 * real publisher's.
 */
export function faultingPublisher(inner: Publisher, journal: Journal, tokens: ReadonlyMap<string, string>, plan: FaultPlan): Publisher {
  let sends = 0;
  const outer: Publisher = {
    name: inner.name,
    get capabilities() {
      return inner.capabilities;
    },
    async publish(message: OutboxMessage): Promise<void> {
      const token = tokens.get(message.id);
      if (typeof message.body === 'string' && message.body.includes('"fail"')) {
        const fail = Number((JSON.parse(message.body) as { fail?: unknown }).fail);
        if (message.attempts <= fail) {
          journal.write({ e: 'injected', id: message.id, tok: token });
          throw new PublishError('OUTBOXER_PUBLISH_FAILED', `chaos: injected transient failure of message ${message.id} (attempt ${message.attempts})`);
        }
      }
      sends++;
      journal.write({ e: 'send', id: message.id, tok: token });
      const publishing = inner.publish(message);
      if (plan.point === 'after-publish-before-confirm' && sends === plan.at) {
        publishing.catch(() => undefined);
        // Let the driver hand the frame to the socket; the confirm cannot arrive within a few ms here.
        await new Promise((resolve) => setTimeout(resolve, 3));
        killSelf(journal, plan.point);
      }
      try {
        await publishing;
      } catch (error) {
        journal.write({ e: 'nack', id: message.id, tok: token, code: (error as { code?: unknown }).code ?? 'unknown' });
        throw error;
      }
      journal.write({ e: 'ack', id: message.id, tok: token });
    },
    close: () => inner.close(),
  };
  if (inner.verify !== undefined) outer.verify = () => (inner.verify as () => Promise<void>).call(inner);
  if (inner.connectionState !== undefined) outer.connectionState = () => (inner.connectionState as () => BrokerConnectionState).call(inner);
  return outer;
}
