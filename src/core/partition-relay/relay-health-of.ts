import type { Publisher } from '../ports.js';
import type { RelayHealth } from '../relay-health.js';
import type { RelayOptions } from '../relay-options.js';
import type { TopicPauses } from '../topic-pauses.js';
import type { LeaseSession } from './lease-session.js';

/**
 * A relay's state for health checks and gauges, from memory (docs/operations.md). `relaysAlive` is undefined
 * while the database is unreachable or no lease is trusted (not joined, standing by, or past `validUntil` of its
 * last trusted beat): the last count is then no evidence that anyone publishes.
 */
export function relayHealthOf(
  running: boolean,
  options: RelayOptions,
  session: LeaseSession,
  databaseError: string | undefined,
  publisher: Publisher,
  pauses: TopicPauses,
  counts: RelayHealth['counts'],
): RelayHealth {
  const membership = session.membership;
  const leaseTrusted = performance.now() <= session.publishDeadline + options.publishTimeoutMs;
  return {
    running,
    owner: options.owner,
    relayId: session.relayId,
    partitions: [...session.book.keys()].sort((a, b) => a - b),
    partitionCount: membership?.config.partitionCount,
    relaysAlive: databaseError === undefined && leaseTrusted ? membership?.relays.length : undefined,
    grantsOpen: membership?.config.grantsOpen,
    database: databaseError === undefined ? { reachable: true } : { reachable: false, error: databaseError },
    broker: publisher.connectionState?.() ?? 'unknown',
    pausedTopics: pauses.topics(),
    pausedDestinations: pauses.destinationHolds(),
    counts: { ...counts },
  };
}
