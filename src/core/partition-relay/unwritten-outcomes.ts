import { keyOf } from '../destinations.js';
import type { FailedMessage, HeldMessage, PartitionCompletion, PartitionMessage } from '../ports.js';

/**
 * An outcome the store skipped because another session held the row locked: decided (the publish happened or
 * failed), not yet written. Kept per partition until a later completion writes it.
 */
/** `key` is the ordering key: the message's key within its destination (`keyOf`). */
export type UnwrittenOutcome = { readonly key: string | null; readonly seq: string } & (
  { readonly kind: 'published' } | { readonly kind: 'failed'; readonly failure: FailedMessage } | { readonly kind: 'held'; readonly held: HeldMessage }
);

/** The outcomes of `completion` that the store skipped, with the key and seq of their message. */
export function skippedOutcomes(
  completion: PartitionCompletion,
  skipped: readonly string[],
  messageOf: (id: string) => Pick<PartitionMessage, 'key' | 'seq' | 'destination'> | undefined,
): Map<string, UnwrittenOutcome> {
  const result = new Map<string, UnwrittenOutcome>();
  const wanted = new Set(skipped);
  const add = (id: string, outcome: { kind: 'published' } | { kind: 'failed'; failure: FailedMessage } | { kind: 'held'; held: HeldMessage }) => {
    const message = messageOf(id);
    if (!wanted.has(id) || message === undefined) return;
    result.set(id, { key: keyOf(message) ?? null, seq: message.seq, ...outcome });
  };
  for (const id of completion.published) add(id, { kind: 'published' });
  for (const failure of completion.failed) add(failure.id, { kind: 'failed', failure });
  for (const held of completion.held) add(held.id, { kind: 'held', held });
  return result;
}

/** A completion that writes the unwritten outcomes again, alone. */
export function completionOf(partition: number, epoch: string, unwritten: ReadonlyMap<string, UnwrittenOutcome>): PartitionCompletion {
  const published: string[] = [];
  const failed: FailedMessage[] = [];
  const held: HeldMessage[] = [];
  for (const [id, outcome] of unwritten) {
    if (outcome.kind === 'published') published.push(id);
    else if (outcome.kind === 'failed') failed.push(outcome.failure);
    else held.push(outcome.held);
  }
  return { partition, epoch, published, failed, held };
}

/**
 * A read's messages as the relay may act on them while outcomes are unwritten: a row whose outcome is decided
 * is not published again, and a later row of its key waits for an unwritten failure or hold (its `waitsFor`
 * becomes that row, the nearest one, unless the store named a nearer blocker), because the failure is not in
 * the table for the store's probe to see. An unwritten publish holds nothing back: it is on the broker already.
 */
export function withUnwritten(messages: readonly PartitionMessage[], unwritten: ReadonlyMap<string, UnwrittenOutcome>, waitMs: number): PartitionMessage[] {
  if (unwritten.size === 0) return [...messages];
  const scheduled = [...unwritten.values()].filter((o) => o.kind !== 'published' && o.key !== null);
  return messages
    .filter((message) => !unwritten.has(message.id))
    .map((message) => {
      const seq = BigInt(message.seq);
      const key = keyOf(message) ?? null;
      let nearest: bigint | undefined;
      for (const outcome of scheduled) {
        const blocker = BigInt(outcome.seq);
        if (outcome.key === key && blocker < seq && (nearest === undefined || blocker > nearest)) nearest = blocker;
      }
      if (nearest === undefined) return message;
      if (message.waitsFor !== null && BigInt(message.waitsFor.seq) > nearest) return message;
      return { ...message, waitsFor: { seq: nearest.toString(), dueInMs: waitMs } };
    });
}
