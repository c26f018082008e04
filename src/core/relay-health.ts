/** What a publisher knows of its broker connection now: `connecting` while it (re)connects after a loss or before the first publish. */
export type BrokerConnectionState = 'connected' | 'connecting' | 'disconnected';

/**
 * One relay's view of itself, read from memory without I/O: what `/health/ready` and the gauges of
 * `outboxer/metrics` report. Every field is as of the relay's last heartbeat, read or publish.
 */
export interface RelayHealth {
  /** `start()` was called and `stop()` has not finished. */
  readonly running: boolean;
  /** The name the relay gave itself (`owner`). */
  readonly owner: string;
  /** The id of its current membership (new on every join); undefined before the first join. */
  readonly relayId: string | undefined;
  /** Partitions it holds now (owned or draining), by number. */
  readonly partitions: readonly number[];
  /** The table's partition count, from the last membership read. */
  readonly partitionCount: number | undefined;
  /**
   * Live relays (this one included) at the last trusted heartbeat; undefined before the first, and while this
   * relay's database is unreachable or its lease is no longer trusted (it stands by): an old count would say
   * relays publish when this one cannot know.
   */
  readonly relaysAlive: number | undefined;
  /** Whether the table grants partitions now (engine v2, no resize waiting). */
  readonly grantsOpen: boolean | undefined;
  /** `reachable: false` from a failed lease, read or completion statement until the loop's next clean pass. */
  readonly database: { readonly reachable: boolean; readonly error?: string };
  /** The publisher's connection (`unknown` for a publisher that does not say). */
  readonly broker: BrokerConnectionState | 'unknown';
  /**
   * Pause keys held now: topics whose destination is missing (`topic`, or `topic@destination`) or that an
   * operator paused, and whole destinations (`*@<name>`) in `pausedDestinations` too.
   */
  readonly pausedTopics: readonly string[];
  /**
   * Destinations held as a whole now, by name (`default`: the relay's own publisher), each with who holds it: an
   * operator's pause (`outboxer destinations pause`) or the relay itself (the destination's broker out of reach).
   */
  readonly pausedDestinations: readonly { readonly destination: string; readonly by: 'operator' | 'relay' }[];
  /** Messages this relay object published, scheduled for a retry, and parked dead since it was made. */
  readonly counts: { readonly published: number; readonly retried: number; readonly dead: number };
}
