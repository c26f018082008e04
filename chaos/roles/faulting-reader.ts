import type { PartitionReader } from '../../src/core/ports.js';
import type { Journal } from '../journal.js';
import { type FaultPlan, killSelf } from './faulting-publisher.js';

/**
 * Journals what a relay read from its partitions as a claim
 * (token `p<partition>e<epoch>r<read>`: the lease that fences it, and the read, since a v2 relay reads a row
 * again after a publish it could not finish) and each completion as a mark of the tokens its rows were read
 * under (every row when applied, none when fenced), so that the checker attributes copies to reads. Rows the store
 * skipped (locked by another session) are journaled apart, as `skip`: nothing was written for them, and their
 * attempt stays open until a later completion writes them or the relay loses their partition. Kills the process
 * after a read or before a completion at the planned occurrence. Everything else of the port passes through
 * unchanged (the read's and the completion's options, the operators' pauses): the relay under test must behave as
 * it does undecorated.
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
    async complete(relayId, outcomes, options) {
      if (outcomes.some((c) => c.published.length > 0)) {
        completions++;
        if (plan.point === 'after-confirm-before-mark' && completions === plan.at) killSelf(journal, plan.point);
      }
      const applied = await inner.complete(relayId, outcomes, options);
      for (const completion of outcomes) {
        const outcome = applied.find((a) => a.partition === completion.partition && a.epoch === completion.epoch);
        const fallback = `p${completion.partition}e${completion.epoch}`;
        // a fenced completion wrote nothing: a mark of 0 rows; a skipped row was not written either
        const skipped = outcome?.applied === true ? new Set(outcome.skipped) : undefined;
        for (const [tok, ids] of byToken(completion.published, tokens, fallback)) journalWrites(journal, 'mark', tok, ids, skipped);
        for (const [tok, ids] of byToken(
          completion.failed.map((f) => f.id),
          tokens,
          fallback,
        ))
          journalWrites(journal, 'markFailed', tok, ids, skipped);
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

/**
 * A completion's rows of one read: fenced (`skipped` undefined), a mark of 0 rows; applied, the rows written as a
 * full mark and those the store skipped as `skip`.
 */
function journalWrites(journal: Journal, e: 'mark' | 'markFailed', tok: string, ids: readonly string[], skipped: ReadonlySet<string> | undefined): void {
  if (skipped === undefined) {
    journal.write({ e, tok, ids, n: 0 });
    return;
  }
  const written = ids.filter((id) => !skipped.has(id));
  const passed = ids.filter((id) => skipped.has(id));
  if (written.length > 0) journal.write({ e, tok, ids: written, n: written.length });
  if (passed.length > 0) journal.write({ e: 'skip', tok, ids: passed });
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
