import type { PartitionReader } from '../../src/core/ports.js';
import type { Journal } from '../journal.js';
import { type FaultPlan, killSelf } from './faulting-publisher.js';

/**
 * Journals what a relay read from its partitions as a claim
 * (token `p<partition>e<epoch>r<read>`: the lease that fences it, and the read, since a v2 relay reads a row
 * again after a publish it could not finish) and each completion as a mark of the tokens its rows were read
 * under (full when applied, short of the rows it skipped, 0 rows when fenced), so that the checker attributes copies to reads; kills the
 * process after a read or before a completion at the planned occurrence. Everything else of the port passes through
 * unchanged (the read's options, the operators' pauses): the relay under test must behave as it does undecorated.
 */
export function faultingReader(inner: PartitionReader, journal: Journal, tokens: Map<string, string>, plan: FaultPlan): PartitionReader {
  let reads = 0;
  let completions = 0;
  return {
    async read(relayId, partitionCount, requests, options) {
      const result = await inner.read(relayId, partitionCount, requests, options);
      if (result.messages.length === 0) return result;
      reads++;
      const epochs = new Map(requests.map((r) => [r.partition, r.epoch]));
      const claims = new Map<string, string[]>();
      for (const message of result.messages) {
        const token = `p${message.partition}e${epochs.get(message.partition) ?? '?'}r${reads}`;
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
        const outcome = applied.find((a) => a.partition === completion.partition && a.epoch === completion.epoch);
        const skipped = new Set(outcome?.skipped ?? []);
        // a fenced completion wrote nothing; a skipped row (locked by another session) was not written either
        const written = (ids: readonly string[]) => (outcome?.applied === true ? ids.filter((id) => !skipped.has(id)).length : 0);
        const fallback = `p${completion.partition}e${completion.epoch}`;
        for (const [tok, ids] of byToken(completion.published, tokens, fallback)) journal.write({ e: 'mark', tok, ids, n: written(ids) });
        for (const [tok, ids] of byToken(
          completion.failed.map((f) => f.id),
          tokens,
          fallback,
        ))
          journal.write({ e: 'markFailed', tok, ids, n: written(ids) });
      }
      return applied;
    },
    countAttempt: (relayId, lease, id) => inner.countAttempt(relayId, lease, id),
    // operator pauses are read through the decorator too: without it a relay here would hold no operator pause
    ...(inner.pausedTopics === undefined ? {} : { pausedTopics: () => (inner.pausedTopics as NonNullable<PartitionReader['pausedTopics']>).call(inner) }),
    ...(inner.destinationPauses === undefined
      ? {}
      : { destinationPauses: () => (inner.destinationPauses as NonNullable<PartitionReader['destinationPauses']>).call(inner) }),
  };
}

/** The ids grouped by the token of the read that returned them. */
function byToken(ids: readonly string[], tokens: ReadonlyMap<string, string>, fallback: string): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const id of ids) {
    const tok = tokens.get(id) ?? fallback;
    groups.set(tok, [...(groups.get(tok) ?? []), id]);
  }
  return groups;
}
