import { ConfigurationError } from '../../core/errors.js';
import { DEFAULT_DESTINATION, destinationFault } from '../../core/message-rules.js';
import {
  MAX_TAKE,
  type PartitionCompleteOptions,
  type PartitionCompletion,
  type PartitionMessage,
  type PartitionReadOptions,
  type PartitionReadOutcome,
  type PartitionReadRequest,
} from '../../core/ports.js';

/** Checks and folds every SQL store's partition reader shares: what a read or a completion may ask, and what a read returned per partition. */

const SEQ = /^[0-9]{1,19}$/;
/** Tags are decimal 64-bit numbers in every store (an xid8 on PostgreSQL, microseconds on MariaDB/MySQL). */
const TAG = /^[0-9]{1,20}$/;
export const MAX_PARTITIONS = 1024;

/**
 * What a read returned per requested partition: the highest fresh seq, and how the recheck went. `messages` come in
 * partition and seq order; `settled` holds the partitions whose recheck the read's horizon allowed.
 */
export function outcomesOf(
  requests: readonly PartitionReadRequest[],
  messages: readonly PartitionMessage[],
  settled: ReadonlySet<number>,
): PartitionReadOutcome[] {
  const byPartition = new Map<number, { reached: string | null; lastRechecked: string | null; rechecked: number }>();
  // rows come in partition and seq order: the last of each kind is the highest
  for (const m of messages) {
    let seen = byPartition.get(m.partition);
    if (seen === undefined) byPartition.set(m.partition, (seen = { reached: null, lastRechecked: null, rechecked: 0 }));
    if (m.source === 'fresh') seen.reached = m.seq;
    else if (m.source === 'recheck') {
      seen.lastRechecked = m.seq;
      seen.rechecked++;
    }
  }
  return requests.map((request) => {
    const seen = byPartition.get(request.partition);
    return {
      partition: request.partition,
      reached: seen?.reached ?? null,
      recheck:
        request.recheck === null
          ? null
          : {
              applied: settled.has(request.partition),
              last: seen?.lastRechecked ?? null,
              full: (seen?.rechecked ?? 0) === request.limit,
            },
    };
  });
}

export function checkRead(relayId: string, partitionCount: number, requests: readonly PartitionReadRequest[]): void {
  const invalid = (what: string) => new ConfigurationError('OUTBOXER_INVALID_OPTION', `read for relay ${relayId}: ${what}`);
  if (!Number.isSafeInteger(partitionCount) || partitionCount < 1 || partitionCount > MAX_PARTITIONS) {
    throw invalid(`partitionCount must be a whole number from 1 to ${MAX_PARTITIONS}; got ${String(partitionCount)}`);
  }
  const seen = new Set<number>();
  for (const r of requests) {
    if (!Number.isSafeInteger(r.partition) || r.partition < 0 || r.partition >= partitionCount || seen.has(r.partition)) {
      throw invalid(`partition ${String(r.partition)} must be a whole number below ${partitionCount}, requested once`);
    }
    seen.add(r.partition);
    if (!Number.isSafeInteger(r.limit) || r.limit < 1 || r.limit > MAX_TAKE) {
      throw invalid(`partition ${r.partition}: limit must be a whole number from 1 to ${MAX_TAKE}; got ${String(r.limit)}`);
    }
    const seqs = [r.after, r.recheck?.from ?? null, r.recheck?.to ?? null].filter((s) => s !== null);
    if (seqs.some((s) => typeof s !== 'string' || !SEQ.test(s)) || (r.recheck !== null && !TAG.test(r.recheck.tag))) {
      throw invalid(`partition ${r.partition}: positions and recheck bounds must be seqs, and the tag, that a read returned`);
    }
  }
}

export function checkCompletions(relayId: string, completions: readonly PartitionCompletion[], options?: PartitionCompleteOptions): void {
  const count = options?.partitionCount;
  if (count !== undefined && (!Number.isSafeInteger(count) || count < 1 || count > MAX_PARTITIONS)) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      `complete for relay ${relayId}: partitionCount must be a whole number from 1 to ${MAX_PARTITIONS}; got ${String(count)}`,
    );
  }
  for (const c of completions) {
    if (!Number.isSafeInteger(c.partition) || c.partition < 0 || typeof c.epoch !== 'string' || !SEQ.test(c.epoch)) {
      throw new ConfigurationError(
        'OUTBOXER_INVALID_OPTION',
        `complete for relay ${relayId}: partition ${String(c.partition)} at epoch ${String(c.epoch)} is not a lease a grant returned`,
      );
    }
  }
}

export function checkDelay(relayId: string, id: string, delayMs: number): void {
  if (!Number.isSafeInteger(delayMs) || delayMs < 0) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      `complete for relay ${relayId}: message ${id} needs a delay in whole ms >= 0; got ${String(delayMs)}`,
    );
  }
}

/**
 * The due branch's destinations of a read's options (`dueDestinations`), checked in every store (MariaDB writes them
 * into the statement as literals): each a destination's name (ASCII letter or digit, then letters, digits, `_` or
 * `-`, at most 64 bytes) or `default`, so no quote or backslash can reach a text. Duplicates dropped, sorted;
 * `undefined` when absent (one due branch over every destination). Refused with a `ConfigurationError`
 * `OUTBOXER_INVALID_DESTINATION`.
 */
export function checkDueDestinations(options: PartitionReadOptions | undefined): readonly string[] | undefined {
  const names: unknown = options?.dueDestinations;
  if (names === undefined) return undefined;
  if (!Array.isArray(names)) {
    throw new ConfigurationError('OUTBOXER_INVALID_DESTINATION', `read option dueDestinations must be an array of destination names; got a ${typeof names}`, {
      options: ['dueDestinations'],
    });
  }
  for (const name of names as unknown[]) {
    const fault =
      typeof name !== 'string' ? `a destination is a string; got a ${typeof name}` : name === DEFAULT_DESTINATION ? undefined : destinationFault(name);
    if (fault !== undefined)
      throw new ConfigurationError('OUTBOXER_INVALID_DESTINATION', `read option dueDestinations: ${fault}`, { options: ['dueDestinations'] });
  }
  return [...new Set(names as string[])].sort();
}

const MAX_SEQ = 2n ** 63n - 1n;

/**
 * A completion's `publishedSeqs`, checked in every store: one seq per published id, each a positive 64-bit seq, and
 * normalized (no leading zeros); `undefined` when absent. Refused with `OUTBOXER_INVALID_OPTION`.
 */
export function checkPublishedSeqs(relayId: string, completion: PartitionCompletion): readonly string[] | undefined {
  const seqs: unknown = completion.publishedSeqs;
  if (seqs === undefined) return undefined;
  const valid =
    Array.isArray(seqs) &&
    seqs.length === completion.published.length &&
    (seqs as unknown[]).every((seq) => typeof seq === 'string' && SEQ.test(seq) && BigInt(seq) <= MAX_SEQ);
  if (!valid) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      `complete for relay ${relayId}: partition ${completion.partition}: publishedSeqs must hold one seq per published id, as the read returned them`,
    );
  }
  return (seqs as string[]).map((seq) => BigInt(seq).toString());
}
