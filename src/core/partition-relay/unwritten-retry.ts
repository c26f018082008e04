import type { RelayOptions } from '../relay-options.js';
import type { CompletionBatcher } from './completion-batcher.js';
import type { LeaseSession } from './lease-session.js';
import type { PartitionEntry } from './partition-book.js';
import { completionOf, type UnwrittenOutcome } from './unwritten-outcomes.js';

/** What the relay lends the retry of unwritten outcomes: its partitions in flight, its batches, how it reports. */
export interface UnwrittenRetryContext {
  readonly options: RelayOptions;
  readonly session: LeaseSession;
  readonly completions: CompletionBatcher;
  /** Partitions with a batch in flight; a retry takes its partition for its time. */
  readonly busy: Set<number>;
  /** Everything the relay awaits before it leaves. */
  readonly batches: Set<Promise<void>>;
  fenced(entry: PartitionEntry, expected: number): void;
  report(stage: 'mark', error: unknown): void;
}

/**
 * Outcomes the store skipped because another session held their rows locked: decided, kept in memory per
 * partition, and written later, alone, when the partition is idle. Their messages are not published again.
 */
export class UnwrittenRetry {
  readonly #context: UnwrittenRetryContext;

  constructor(context: UnwrittenRetryContext) {
    this.#context = context;
  }

  keep(entry: PartitionEntry, outcomes: ReadonlyMap<string, UnwrittenOutcome>): void {
    const { options } = this.#context;
    if (entry.unwritten.size === 0) entry.unwrittenRetryAt = performance.now() + options.errorBackoffMs;
    for (const [id, outcome] of outcomes) entry.unwritten.set(id, outcome);
    options.logger.warn(
      { owner: options.owner, partition: entry.partition, rows: outcomes.size },
      'rows locked by another session: their outcome is kept in memory and written later; they are not published again',
    );
  }

  /** Writes outcomes the store skipped, alone, for partitions that are idle and whose retry time has come. */
  retry(): void {
    const { options, session, completions, busy, batches } = this.#context;
    const relayId = session.relayId;
    if (relayId === undefined) return;
    const now = performance.now();
    for (const entry of session.book.values()) {
      if (entry.unwritten.size === 0 || now < entry.unwrittenRetryAt || busy.has(entry.partition)) continue;
      busy.add(entry.partition);
      const sent = new Map(entry.unwritten);
      const retry = completions
        .complete(relayId, completionOf(entry.partition, entry.epoch, sent))
        .then((outcome) => {
          if (!outcome.applied) {
            this.#context.fenced(entry, sent.size);
            return;
          }
          const still = new Set(outcome.skipped);
          for (const id of sent.keys()) if (!still.has(id)) entry.unwritten.delete(id);
          entry.unwrittenRetryAt = performance.now() + options.errorBackoffMs;
        })
        .catch((error: unknown) => {
          entry.unwrittenRetryAt = performance.now() + options.errorBackoffMs;
          this.#context.report('mark', error);
        })
        .finally(() => {
          busy.delete(entry.partition);
          batches.delete(retry);
        });
      batches.add(retry);
    }
  }
}
