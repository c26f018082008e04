import { destinationName, destinationPauseKey, type Destinations, keyOf } from '../destinations.js';
import type { ClaimOutcome } from '../publish-claim.js';
import type { FailedMessage, HeldMessage, PartitionCompletion, PartitionMessage } from '../ports.js';
import type { TopicPauses } from '../topic-pauses.js';

/** The shortest hold written for a message that waits: its blocker's due time may have just run out. */
export const MIN_HOLD_MS = 50;

export interface WaitingSplit {
  /** To publish now, per key in seq order. */
  readonly ready: PartitionMessage[];
  /** Written as holds without an attempt: each waits for an earlier scheduled row of its key that is not going out now. */
  readonly held: (HeldMessage & { readonly partition: number })[];
}

/**
 * Decides which messages of one read wait. A message whose key has an earlier scheduled row (`waitsFor`) may
 * go only right after that row, in this batch: then it is simply later in the key's chain, and publishes only
 * if the row does. Otherwise it, and every later message of its key in the batch, gets a hold for the time the
 * row has left (at least `MIN_HOLD_MS`). When the due branch a message's blocker comes from came back full (`dueFull`:
 * the partition's, or with fan-out the partition's for the message's destination), due rows between
 * the blocker and a fresh or rechecked message may have been cut off, so even a blocker in the batch is not trusted
 * for those; a message the due branch returned itself comes with every due row below it (the branch reads in seq
 * order), and a scheduled row that is not due yet between the two would be its nearest blocker instead.
 */
export function splitWaiting(messages: readonly PartitionMessage[], dueFull: (message: PartitionMessage) => boolean): WaitingSplit {
  const ready: PartitionMessage[] = [];
  const held: WaitingSplit['held'] = [];
  const goingOut = new Map<string, Set<string>>();
  const stopped = new Map<string, { readonly delayMs: number; readonly blocker: string }>();
  for (const message of messages) {
    const key = keyOf(message);
    if (key === undefined) {
      ready.push(message);
      continue;
    }
    const stop = stopped.get(key);
    if (stop !== undefined) {
      held.push({ id: message.id, partition: message.partition, delayMs: stop.delayMs, reason: waitReason(stop.blocker) });
      continue;
    }
    const earlier = goingOut.get(key) ?? new Set<string>();
    const waits = message.waitsFor;
    if (waits !== null && !(earlier.has(waits.seq) && (message.source === 'due' || !dueFull(message)))) {
      const delayMs = Math.max(MIN_HOLD_MS, Math.ceil(waits.dueInMs));
      stopped.set(key, { delayMs, blocker: `seq ${waits.seq}` });
      held.push({ id: message.id, partition: message.partition, delayMs, reason: waitReason(`seq ${waits.seq}`) });
      continue;
    }
    earlier.add(message.seq);
    goingOut.set(key, earlier);
    ready.push(message);
  }
  return { ready, held };
}

/**
 * Waiting messages of a topic or a destination an operator paused say so: the operator's reason, held at least to
 * the end of the pause's current window (never earlier than their blocker, so key order is kept either way).
 */
export function operatorHolds(
  held: WaitingSplit['held'],
  messages: readonly PartitionMessage[],
  pauses: TopicPauses,
  now: number,
  destinations?: Destinations,
): WaitingSplit['held'] {
  if (held.length === 0) return held;
  const byId = new Map(messages.map((m) => [m.id, m]));
  return held.map((h) => {
    const message = byId.get(h.id);
    const key = message === undefined ? undefined : operatorPauseOf(message, pauses, destinations);
    if (key === undefined) return h;
    return { ...h, delayMs: Math.max(h.delayMs, pauses.remainingMs(key, now)), reason: pauses.reason(key) ?? h.reason };
  });
}

/**
 * The pause key of an operator's pause that holds `message`, if any: its topic's, else its whole destination's
 * (`*@<name>`, `*@default` for a row without one), as `publishClaim` checks them.
 */
export function operatorPauseOf(
  message: Pick<PartitionMessage, 'topic' | 'destination'>,
  pauses: TopicPauses,
  destinations?: Destinations,
): string | undefined {
  if (pauses.isOperatorPaused(message.topic)) return message.topic;
  const key = destinations?.of(message.destination)?.pauseKey ?? destinationPauseKey(destinationName(message));
  return pauses.isOperatorPaused(key) ? key : undefined;
}

function waitReason(blocker: string): string {
  return `waits for an earlier message of its key (${blocker}) that is scheduled`;
}

/** A partition's outcome, and whether it must be read again from the start (messages left unwritten). */
export interface PartitionResult {
  readonly completion: PartitionCompletion;
  /** Some messages were neither published nor written (broker unavailable, lease running short, stopping). */
  readonly reread: boolean;
}

/**
 * Turns one batch's outcome into a completion per partition. Published, failed and held messages are written;
 * messages released behind a retried failure of their key are held until that failure is due again, so that no
 * owner publishes them first; messages released for any other reason are not written, and their partition
 * must be read again from its start (its position already passed them).
 */
export function completionsFrom(
  batch: readonly PartitionMessage[],
  outcome: ClaimOutcome,
  preHeld: WaitingSplit['held'],
  epochOf: (partition: number) => string,
): PartitionResult[] {
  const partitionOf = new Map(batch.map((message) => [message.id, message.partition]));
  const results = new Map<number, { published: string[]; failed: FailedMessage[]; held: HeldMessage[]; reread: boolean }>();
  const of = (id: string) => {
    const partition = partitionOf.get(id);
    if (partition === undefined) throw new Error(`message ${id} is not in the batch`);
    let result = results.get(partition);
    if (result === undefined) results.set(partition, (result = { published: [], failed: [], held: [], reread: false }));
    return result;
  };
  for (const { id, delayMs, reason } of preHeld) of(id).held.push({ id, delayMs, reason });
  for (const message of outcome.published) of(message.id).published.push(message.id);
  const retriedKeys = new Map<string, { readonly retryInMs: number; readonly id: string }>();
  for (const { message, failure } of outcome.failed) {
    of(message.id).failed.push(failure);
    const key = keyOf(message);
    if (key !== undefined && 'retryInMs' in failure) retriedKeys.set(key, { retryInMs: failure.retryInMs, id: message.id });
  }
  for (const group of outcome.held.values())
    for (const message of group.messages) of(message.id).held.push({ id: message.id, delayMs: group.delayMs, reason: group.error });
  for (const message of outcome.released) {
    const key = keyOf(message);
    const blocker = key === undefined ? undefined : retriedKeys.get(key);
    if (blocker === undefined) of(message.id).reread = true;
    else
      of(message.id).held.push({
        id: message.id,
        delayMs: Math.max(MIN_HOLD_MS, blocker.retryInMs),
        reason: `waits for message ${blocker.id} of its key, which failed and is retried`,
      });
  }
  return [...results].map(([partition, r]) => ({
    completion: { partition, epoch: epochOf(partition), published: r.published, failed: r.failed, held: r.held },
    reread: r.reread,
  }));
}

/** The seq of each message of a batch as the read returned it, by id: built once per batch for `withPublishedSeqs`. */
export function seqsById(batch: readonly PartitionMessage[]): ReadonlyMap<string, string> {
  const seqs = new Map<string, string>();
  for (const message of batch) seqs.set(message.id, message.seq);
  return seqs;
}

/**
 * The completion with the seq of each published message as the read returned it (`publishedSeqs`, looked up in
 * `seqsById` of the batch), so that the store can take the rows by seq. Unchanged when a published id is not in the
 * batch: the store then finds them by id.
 */
export function withPublishedSeqs(completion: PartitionCompletion, seqOf: ReadonlyMap<string, string>): PartitionCompletion {
  if (completion.published.length === 0) return completion;
  const seqs: string[] = [];
  for (const id of completion.published) {
    const seq = seqOf.get(id);
    if (seq === undefined) return completion;
    seqs.push(seq);
  }
  return { ...completion, publishedSeqs: seqs };
}

/**
 * The completion with its retried failures written as holds for their backoff, without counting an attempt:
 * for a failure whose attempt was counted already (before the publish of an unclean partition, or by an earlier
 * try of this completion that may have committed). A backoff written twice would count twice; parking twice
 * changes nothing.
 */
export function uncounted(completion: PartitionCompletion): PartitionCompletion {
  const retried = completion.failed.flatMap((f) => ('retryInMs' in f ? [f] : []));
  if (retried.length === 0) return completion;
  return {
    ...completion,
    failed: completion.failed.filter((f) => 'dead' in f),
    held: [...completion.held, ...retried.map((f) => ({ id: f.id, delayMs: f.retryInMs, reason: f.error }))],
  };
}
