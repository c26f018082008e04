import { tmpdir } from 'node:os';

/** Where the services are and how big each scenario is; the only knobs of the benchmark. */
export const services = Object.freeze({
  postgresUrl: process.env.OUTBOXER_BENCH_DATABASE_URL ?? process.env.OUTBOXER_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  amqpUrl: process.env.OUTBOXER_BENCH_AMQP_URL ?? process.env.OUTBOXER_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  natsUrl: process.env.OUTBOXER_BENCH_NATS_URL ?? process.env.OUTBOXER_TEST_NATS_URL ?? 'nats://127.0.0.1:4222',
  /** MariaDB of the `outboxer-mariadb` contender: each contender creates a database of its own there and drops it. */
  mysqlUrl: process.env.OUTBOXER_BENCH_MYSQL_URL ?? process.env.OUTBOXER_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test',
  /** Where the `outboxer-sqlite` contender's files go (a directory each, removed afterwards): a disk, as in production. */
  sqliteDirectory: process.env.OUTBOXER_BENCH_SQLITE_DIR ?? tmpdir(),
  /** (k) Redis Streams and MQTT (Mosquitto) of the issue-21 publishers' drain. */
  redisUrl: process.env.OUTBOXER_BENCH_REDIS_URL ?? process.env.OUTBOXER_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
  mqttUrl: process.env.OUTBOXER_BENCH_MQTT_URL ?? process.env.OUTBOXER_TEST_MQTT_URL ?? 'mqtt://127.0.0.1:1883',
});

export type SizeName = 'smoke' | 'full';

export interface Sizes {
  /** (a) backlog drained. */
  readonly drainMessages: number;
  /** (a) contenders that cannot drain the whole backlog in reasonable time are measured over this window. */
  readonly drainCapSeconds: number;
  /** (b) target rates (messages/s) and how long each runs. */
  readonly steadyRates: readonly number[];
  readonly steadySeconds: number;
  readonly steadyWriters: number;
  /** Messages each writer transaction enqueues in (b): a 2-core machine cannot commit 5,000 transactions/s. */
  readonly steadyMessagesPerTransaction: number;
  /** (c) closed-loop writers and how long each phase lasts. */
  readonly writerConnections: number;
  readonly writerSeconds: number;
  /** (d) warm-up (poll back-off settles) and counting window. */
  readonly idleWarmupSeconds: number;
  readonly idleSeconds: number;
  /** (e) table sizes compared, and claims timed on each. */
  readonly claimTableRows: readonly [small: number, large: number];
  readonly claimsTimed: number;
  readonly claimBatch: number;
  /** (f) backlog drained with and without a held snapshot, and the longest a phase may run. */
  readonly snapshotBacklog: number;
  readonly snapshotSeconds: number;
  /** Distinct keys messages are spread over (per-key order applies). */
  readonly keys: number;
  /** Approximate payload size in bytes. */
  readonly payloadBytes: number;
  /** (g) backlog drained by `outboxer relay` processes, and how many processes each run starts. */
  readonly scaleMessages: number;
  readonly scaleRelays: readonly number[];
  /** (h) rounds of one in-order commit, one late commit beside another key and one beside the same key, per writer path. */
  readonly lateCommitRounds: number;
  /** (i) rounds of a relay joining and dying, then another joining and leaving. */
  readonly rebalanceRounds: number;
  /** (j) rounds in which every path (raw pg, then each ORM adapter) runs `ormTransactions` timed enqueues in turn. */
  readonly ormRounds: number;
  readonly ormTransactions: number;
  /** (j) commit-to-confirm samples per path, one message at a time. */
  readonly ormConfirmSamples: number;
  /** (k) backlog drained per publisher of issue 21 (Redis Streams, MQTT, webhook), beside that broker's own client. */
  readonly publisherMessages: number;
  /** (l) backlog each relay process drains, outboxer's CLI relay beside the ideal unordered relay (issue 23), and rounds of both. */
  readonly floorMessages: number;
  readonly floorRounds: number;
  /** (m) messages each consumer drains (its own preloaded copy), outboxer's consumer with its inbox beside a minimal one (issue 23), and rounds of both. */
  readonly consumerMessages: number;
  readonly consumerRounds: number;
  /** Relay engine of the outboxer contender and of (g) (default v2): sets the table's engine, and passes the relay option / CLI flag when it is not the relay's default. */
  readonly engine: Engine;
}

/** Engine v1 was removed: the setting takes only v2, and stays so that runs name their engine. */
export type Engine = 'v2';
export const ENGINES: readonly Engine[] = ['v2'];

const smoke: Sizes = {
  drainMessages: 2_000,
  drainCapSeconds: 1,
  steadyRates: [200],
  steadySeconds: 1.2,
  steadyWriters: 4,
  steadyMessagesPerTransaction: 1,
  writerConnections: 8,
  writerSeconds: 0.7,
  idleWarmupSeconds: 0.5,
  idleSeconds: 0.8,
  claimTableRows: [1_000, 10_000],
  claimsTimed: 10,
  claimBatch: 50,
  snapshotBacklog: 1_000,
  snapshotSeconds: 1,
  keys: 100,
  payloadBytes: 200,
  scaleMessages: 2_000,
  scaleRelays: [1, 2],
  lateCommitRounds: 1,
  rebalanceRounds: 1,
  ormRounds: 2,
  ormTransactions: 10,
  ormConfirmSamples: 5,
  publisherMessages: 2_000,
  floorMessages: 2_000,
  floorRounds: 1,
  consumerMessages: 500,
  consumerRounds: 1,
  engine: 'v2',
};

const full: Sizes = {
  drainMessages: 1_000_000,
  drainCapSeconds: 60,
  steadyRates: [1_000, 5_000],
  steadySeconds: 60,
  steadyWriters: 16,
  steadyMessagesPerTransaction: 1,
  writerConnections: 32,
  writerSeconds: 20,
  idleWarmupSeconds: 5,
  idleSeconds: 60,
  claimTableRows: [10_000, 10_000_000],
  claimsTimed: 200,
  claimBatch: 200,
  snapshotBacklog: 1_000_000,
  snapshotSeconds: 180,
  keys: 1_000,
  payloadBytes: 200,
  scaleMessages: 1_000_000,
  scaleRelays: [1, 2, 4],
  lateCommitRounds: 200,
  rebalanceRounds: 5,
  ormRounds: 20,
  ormTransactions: 250,
  ormConfirmSamples: 200,
  publisherMessages: 100_000,
  floorMessages: 100_000,
  floorRounds: 2,
  consumerMessages: 20_000,
  consumerRounds: 2,
  engine: 'v2',
};

export const sizes: Readonly<Record<SizeName, Sizes>> = Object.freeze({ smoke, full });

/** Connections the benchmark may hold at once (the server is shared: max_connections 100). */
export const MAX_BENCH_CONNECTIONS = 40;
