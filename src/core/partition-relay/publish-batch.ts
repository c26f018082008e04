import { keyOf, type Destinations } from '../destinations.js';
import { DEFAULT_DESTINATION } from '../message-rules.js';
import type { PartitionMessage, PartitionReader, Publisher } from '../ports.js';
import { type ClaimOutcome, publishClaim } from '../publish-claim.js';
import type { PublishPermits } from '../publish-window.js';
import type { RelayOptions } from '../relay-options.js';
import type { TopicPauses } from '../topic-pauses.js';
import { bounded } from './bounded-statement.js';
import { type PartitionEntry, UNCLEAN_LIMIT } from './partition-book.js';
import { completionsFrom, operatorHolds, operatorPauseOf, type PartitionResult, seqsById, splitWaiting, uncounted, withPublishedSeqs } from './publish-plan.js';

export interface BatchContext {
  readonly relayId: string;
  readonly publisher: Publisher;
  readonly destinations?: Destinations;
  readonly reader: PartitionReader;
  readonly options: RelayOptions;
  readonly pauses: TopicPauses;
  /** Monotonic ms after which no publish starts (the lease's publish deadline when the batch began). */
  readonly publishDeadline: number;
  readonly isStopping: () => boolean;
  /**
   * How many rows each partition's read was allowed per branch (per destination for the due branch with fan-out):
   * a due branch that filled it may have been cut.
   */
  readonly limitOf: (partition: number) => number;
  readonly statementMs: number;
  /** This batch's share of the relay's publish window. */
  readonly permits: PublishPermits;
}

export interface BatchOutcome {
  readonly outcome: ClaimOutcome;
  readonly results: readonly PartitionResult[];
  /** Partitions whose counted attempt was refused: no longer mine at that epoch. */
  readonly lost: readonly number[];
}

/**
 * Publishes one read's messages: those that wait for a scheduled row of their key are held; the rest go out per
 * key in seq order, keys in parallel up to `maxInFlight` (`publishClaim`). A partition whose owners keep dying
 * (`unclean >= 3`) publishes one row at a time, each after a fenced `attempts + 1`, so that a message that kills
 * relays is parked once its attempts are used up.
 */
export async function publishBatch(
  messages: readonly PartitionMessage[],
  entries: ReadonlyMap<number, PartitionEntry>,
  context: BatchContext,
): Promise<BatchOutcome> {
  const split = splitWaiting(messages, dueBranchFull(messages, context.destinations?.fansOut === true, context.limitOf));
  const { ready } = split;
  const held = operatorHolds(split.held, messages, context.pauses, performance.now(), context.destinations);
  const unclean = (m: PartitionMessage) => (entries.get(m.partition)?.unclean ?? 0) >= UNCLEAN_LIMIT;
  const publishContext = {
    publisher: context.publisher,
    ...(context.destinations === undefined ? {} : { destinations: context.destinations }),
    options: context.options,
    publishDeadline: context.publishDeadline,
    isStopping: context.isStopping,
    pauses: context.pauses,
    permits: context.permits,
  };
  const lost = new Set<number>();
  const [clean, ...careful] = await Promise.all([
    publishClaim(
      ready.filter((m) => !unclean(m)),
      publishContext,
    ),
    ...[...new Set(ready.filter(unclean).map((m) => m.partition))].map((partition) =>
      oneAtATime(
        ready.filter((m) => m.partition === partition),
        entries.get(partition) as PartitionEntry,
        context,
        publishContext,
        lost,
      ),
    ),
  ]);
  const outcome = careful.reduce(merge, clean);
  const sent = messages.filter((m) => !lost.has(m.partition));
  // one lookup for the whole batch, not one per partition: a batch spans up to every partition of the table
  const seqOf = seqsById(sent);
  const results = completionsFrom(
    sent,
    withoutPartitions(outcome, lost),
    held.filter((h) => !lost.has(h.partition)),
    (p) => (entries.get(p) as PartitionEntry).epoch,
  ).map((result) => ({ ...result, completion: withPublishedSeqs(result.completion, seqOf) }));
  const counted = new Set(ready.filter(unclean).map((m) => m.partition));
  return {
    outcome,
    results: results.map((result) => (counted.has(result.completion.partition) ? { ...result, completion: uncounted(result.completion) } : result)),
    lost: [...lost],
  };
}

async function oneAtATime(
  messages: readonly PartitionMessage[],
  entry: PartitionEntry,
  context: BatchContext,
  publishContext: Parameters<typeof publishClaim>[1],
  lost: Set<number>,
): Promise<ClaimOutcome> {
  let outcome: ClaimOutcome = { published: [], failed: [], released: [], held: new Map(), topicEvents: [] };
  for (const [index, message] of messages.entries()) {
    // an operator's pause (of its topic or its whole destination) holds the message without a publish: no attempt to count
    const counted =
      operatorPauseOf(message, context.pauses, context.destinations) !== undefined ||
      (await bounded(context.reader.countAttempt(context.relayId, entry, message.id), context.statementMs, `counted attempt in partition ${entry.partition}`));
    if (!counted) {
      lost.add(entry.partition);
      return outcome;
    }
    outcome = merge(outcome, await publishClaim([message], publishContext));
    const stopped = outcome.failed.some((f) => keyOf(f.message) !== undefined && keyOf(f.message) === keyOf(message) && 'retryInMs' in f.failure);
    if (outcome.released.length > 0 || outcome.held.size > 0 || stopped) {
      const rest = messages.slice(index + 1);
      return { ...outcome, released: [...outcome.released, ...rest] };
    }
  }
  return outcome;
}

function merge(a: ClaimOutcome, b: ClaimOutcome): ClaimOutcome {
  const held = new Map(a.held);
  for (const [topic, group] of b.held) {
    const before = held.get(topic);
    held.set(topic, before === undefined ? group : { ...before, messages: [...before.messages, ...group.messages] });
  }
  const brokerUnavailable = a.brokerUnavailable ?? b.brokerUnavailable;
  const unavailable = a.unavailable === undefined ? b.unavailable : new Map([...a.unavailable, ...(b.unavailable ?? [])]);
  return {
    ...(unavailable === undefined ? {} : { unavailable }),
    published: [...a.published, ...b.published],
    failed: [...a.failed, ...b.failed],
    released: [...a.released, ...b.released],
    held,
    topicEvents: [...a.topicEvents, ...b.topicEvents],
    ...(brokerUnavailable === undefined ? {} : { brokerUnavailable }),
  };
}

function withoutPartitions(outcome: ClaimOutcome, lost: ReadonlySet<number>): ClaimOutcome {
  if (lost.size === 0) return outcome;
  const keep = (m: { readonly id: string }) => !lost.has((m as PartitionMessage).partition);
  const held = new Map([...outcome.held].map(([topic, group]) => [topic, { ...group, messages: group.messages.filter(keep) }]));
  return {
    ...outcome,
    published: outcome.published.filter(keep),
    failed: outcome.failed.filter((f) => keep(f.message)),
    released: outcome.released.filter(keep),
    held,
  };
}

/**
 * Whether the due branch that would have returned a message's blocker came back full: per partition, or with fan-out
 * (the read splits its due branch per destination) per partition and destination.
 */
export function dueBranchFull(
  messages: readonly PartitionMessage[],
  perDestination: boolean,
  limitOf: (partition: number) => number,
): (message: PartitionMessage) => boolean {
  const branchOf = (m: PartitionMessage) => (perDestination ? `${m.partition}\u0000${m.destination ?? DEFAULT_DESTINATION}` : String(m.partition));
  const due = new Map<string, number>();
  for (const m of messages) if (m.source === 'due') due.set(branchOf(m), (due.get(branchOf(m)) ?? 0) + 1);
  return (m) => (due.get(branchOf(m)) ?? 0) >= limitOf(m.partition);
}
