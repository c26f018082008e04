import type { PartitionReader } from '../../src/core/ports.js';
import type { Journal } from '../journal.js';
import { type FaultPlan, killSelf } from './faulting-publisher.js';

/**
 * The engine v2 counterpart of `faultingStore`: journals what a relay read from its partitions as a claim
 * (token `p<partition>e<epoch>`, the lease that fences it) and each completion as a mark (full when
 * applied, 0 rows when fenced), so that the checker attributes v2 copies as it does v1's; kills the
 * process after a read or before a completion at the planned occurrence.
 */
export function faultingReader(inner: PartitionReader, journal: Journal, tokens: Map<string, string>, plan: FaultPlan): PartitionReader {
  let reads = 0;
  let completions = 0;
  return {
    async read(relayId, partitionCount, requests) {
      const result = await inner.read(relayId, partitionCount, requests);
      if (result.messages.length === 0) return result;
      reads++;
      const epochs = new Map(requests.map((r) => [r.partition, r.epoch]));
      const claims = new Map<string, string[]>();
      for (const message of result.messages) {
        const token = `p${message.partition}e${epochs.get(message.partition) ?? '?'}`;
        tokens.set(message.id, token);
        claims.set(token, [...(claims.get(token) ?? []), message.id]);
      }
      for (const [tok, ids] of claims) journal.write({ e: 'claim', tok, ids });
      if (plan.point === 'after-claim' && reads === plan.at) killSelf(journal, plan.point);
      return result;
    },
    async complete(relayId, outcomes) {
      if (outcomes.some((c) => c.published.length > 0)) {
        completions++;
        if (plan.point === 'after-confirm-before-mark' && completions === plan.at) killSelf(journal, plan.point);
      }
      const applied = await inner.complete(relayId, outcomes);
      for (const completion of outcomes) {
        const tok = `p${completion.partition}e${completion.epoch}`;
        const done = applied.find((a) => a.partition === completion.partition && a.epoch === completion.epoch)?.applied === true;
        if (completion.published.length > 0) journal.write({ e: 'mark', tok, ids: completion.published, n: done ? completion.published.length : 0 });
        if (completion.failed.length > 0) journal.write({ e: 'markFailed', tok, ids: completion.failed.map((f) => f.id), n: done ? completion.failed.length : 0 });
      }
      return applied;
    },
    countAttempt: (relayId, lease, id) => inner.countAttempt(relayId, lease, id),
  };
}
