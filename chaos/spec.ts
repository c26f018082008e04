/** What a scenario asks of the roles; written as JSON for each role process (never with secrets). */
export type BrokerKind = 'rabbitmq' | 'nats';
/** `late-topology`: a healthy event on a topic whose destination (binding or stream) the scenario creates late. */
export type MessageKind = 'normal' | 'transient' | 'poison-large' | 'late-topology';

export interface WorkloadSpec {
  readonly writers: number;
  /** Concurrent transactions per writer, each on its own connection. */
  readonly lanes: number;
  readonly txnsPerWriter: number;
  readonly keys: number;
  /** Messages per transaction, 1..max (all for the same aggregate). */
  readonly maxMessagesPerTxn: number;
  readonly rollbackShare: number;
  /** Transactions held open for longOpenMs before commit: their seq values commit late (sequence gaps). */
  readonly longOpenShare: number;
  readonly longOpenMs: readonly [number, number];
  readonly poisonLargeShare: number;
  /** Events on the late topic (no destination until the scenario makes one): delayed, never dead. */
  readonly lateTopologyShare: number;
  /** Messages whose first publishes fail (1..2 times) with a transient error, injected in the relay. */
  readonly transientShare: number;
  /** Pause between transactions of one lane. */
  readonly paceMs: readonly [number, number];
  /**
   * Committed messages per second all writers aim at together: each lane starts its transactions on a
   * fixed schedule (catching up when late), then pauses `paceMs` as well. `null`: paced by `paceMs` only.
   */
  readonly ratePerSecond: number | null;
}

export interface RelaySpec {
  readonly count: number;
  readonly leaseMs: number;
  readonly publishTimeoutMs: number;
  readonly pollIntervalMs: number;
  readonly maxPollIntervalMs: number;
  readonly batchSize: number;
  /** Claim loops per relay: a relay holds up to `lanes` claims of `batchSize` at once. */
  readonly lanes: number;
  readonly maxInFlight: number;
  readonly maxAttempts: number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  readonly errorBackoffMs: number;
  readonly maxErrorBackoffMs: number;
  readonly queryTimeoutMs: number;
  /** The broker limit the publisher is given: poison-large messages are bigger. */
  readonly maxMessageBytes: number;
  /** The relay engine, passed to the relay's options (the table is set to it too); the relay's default when absent. */
  readonly engine?: RelayEngine | undefined;
}

/** The only engine since v1 was removed; kept in specs and reports, which name it. */
export type RelayEngine = 'v2';

/** Named points where a relay kills itself with SIGKILL. */
export type KillPoint = 'after-claim' | 'after-publish-before-confirm' | 'after-confirm-before-mark';

/**
 * Fan-out (docs/fan-out.md): a destination besides `default` (the scenario's own broker). Its broker gets resources
 * of its own (a RabbitMQ exchange and queue, or a JetStream stream on the scenario's private nats-server) and the
 * relays reach it through a TCP proxy of its own, shared by every relay, so that a schedule can cut that destination
 * alone (`chaos/faults/destination-faults.ts`).
 */
export interface DestinationSpec {
  readonly name: string;
  readonly broker: BrokerKind;
}

/** The name of the relay's own publisher among the destinations (rows stored without one). */
export const DEFAULT_DESTINATION = 'default';

/** Where one destination's messages go, as a relay publishes them and the consumer reads them. */
export interface DestinationWiring {
  /** `default`, or a named destination. */
  readonly name: string;
  readonly broker: BrokerKind;
  /** RabbitMQ: the exchange the relay publishes to. */
  readonly exchange: string;
  /** NATS: the subject prefix the relay publishes under (subjects `<prefix>.<topic>`); undefined for `default`. */
  readonly subjectPrefix?: string | undefined;
  /** RabbitMQ queue, or JetStream stream, the consumer reads. */
  readonly queue: string;
  /** JetStream durable consumer. */
  readonly durable: string;
  /** The environment variable that holds the broker URL (a secret: never in a config). */
  readonly urlEnv: string;
}

export interface WriterConfig {
  readonly role: 'writer';
  readonly schema: string;
  readonly topicPrefix: string;
  /** Prefix of the late topic: `<lateTopicPrefix>.<key>`. */
  readonly lateTopicPrefix: string;
  readonly seed: number;
  readonly index: number;
  readonly workload: WorkloadSpec;
  readonly maxMessageBytes: number;
  /** Fan-out: the destinations of every topic of the workload, `default` first (one row each); none: one row, `default`. */
  readonly destinations?: readonly string[] | undefined;
  readonly journal: string;
}

export interface RelayConfig {
  readonly role: 'relay';
  readonly schema: string;
  readonly broker: BrokerKind;
  readonly exchange: string;
  readonly index: number;
  readonly incarnation: number;
  readonly applicationName: string;
  readonly relay: RelaySpec;
  readonly killPoint?: { readonly point: KillPoint; readonly at: number } | undefined;
  /** Fan-out: the named destinations (not `default`), each with a publisher of its own. */
  readonly destinations?: readonly DestinationWiring[] | undefined;
  readonly journal: string;
}

export interface ConsumerConfig {
  readonly role: 'consumer';
  /** Every destination the consumer reads, `default` first; each delivery is journaled with its destination. */
  readonly sources: readonly DestinationWiring[];
  readonly journal: string;
}

export type RoleConfig = WriterConfig | RelayConfig | ConsumerConfig;

/** Secrets travel by environment only, so that no file the harness writes holds them. */
export const ENV_PG_URL = 'CHAOS_PG_URL';
export const ENV_BROKER_URL = 'CHAOS_BROKER_URL';

/** The environment variable of a named destination's broker URL (`default` uses `ENV_BROKER_URL`). */
export function brokerUrlEnv(destination: string): string {
  return destination === DEFAULT_DESTINATION ? ENV_BROKER_URL : `${ENV_BROKER_URL}_${destination.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

export const DEFAULT_WORKLOAD: WorkloadSpec = Object.freeze({
  writers: 2,
  lanes: 2,
  txnsPerWriter: 80,
  keys: 24,
  maxMessagesPerTxn: 3,
  rollbackShare: 0.1,
  longOpenShare: 0.04,
  longOpenMs: [1000, 2500] as const,
  poisonLargeShare: 0.01,
  lateTopologyShare: 0,
  transientShare: 0.03,
  paceMs: [20, 80] as const,
  ratePerSecond: null,
});

export const DEFAULT_RELAY: RelaySpec = Object.freeze({
  count: 3,
  leaseMs: 3000,
  publishTimeoutMs: 1000,
  pollIntervalMs: 50,
  maxPollIntervalMs: 250,
  batchSize: 20,
  lanes: 3,
  maxInFlight: 16,
  maxAttempts: 12,
  retryBaseMs: 50,
  retryMaxMs: 400,
  errorBackoffMs: 100,
  maxErrorBackoffMs: 1000,
  queryTimeoutMs: 5000,
  maxMessageBytes: 64 * 1024,
});

export function readRoleConfig<T extends RoleConfig>(role: T['role']): T {
  const raw = process.env.CHAOS_CONFIG;
  if (raw === undefined) throw new Error('CHAOS_CONFIG is not set');
  const config = JSON.parse(raw) as RoleConfig;
  if (config.role !== role) throw new Error(`expected a ${role} config, got ${config.role}`);
  return config as T;
}

export function requireEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
}
