import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { type Sizes, services } from '../config.js';
import { IDEAL_READY } from '../contenders/ideal-relay.js';
import { OUTBOXER_RELAY_SETTINGS } from '../contenders/outboxer.js';
import type { BrokerTarget } from '../support/broker-target.js';
import { engineCliFlags } from '../support/engine.js';
import { type RelayProcess, startNodeProcess, startRelayProcess } from '../support/relay-processes.js';
import type { Workload } from '../support/workload.js';
import { brokerFlags } from './scale-out.js';

export const FLOOR_DATABASES = ['postgres', 'mariadb', 'sqlite'] as const;
export type FloorDatabaseKind = (typeof FLOOR_DATABASES)[number];
export const FLOOR_SIDES = ['ideal', 'outboxer'] as const;
export type FloorSide = (typeof FLOOR_SIDES)[number];

/** What one drain of (l) runs on: the processes' entry points, its broker resources and its rows. */
export interface FloorRun {
  readonly sizes: Sizes;
  /** `outboxer` and the ideal relay, as built by `buildCli` (relay-floor.ts). */
  readonly cliMain: string;
  readonly idealMain: string;
  readonly target: BrokerTarget;
  readonly workload: Workload;
}

/** A backlog table and the relay process that drains it, on a database/schema/file of its own: one side of (l). */
export interface FloorContestant {
  setup(): Promise<void>;
  /** Starts the relay process and resolves once it is ready to drain (outboxer: holds every partition). */
  start(): Promise<RelayProcess>;
  /**
   * Inserts `count` rows in one transaction, calls `armed` before its COMMIT (the CPU counters are read there),
   * commits, and resolves with `performance.now()` of the COMMIT's return; then wakes the relay where the database
   * can (PostgreSQL's NOTIFY), outside the time it resolves with.
   */
  commitBacklog(count: number, armed: () => Promise<void>): Promise<number>;
  /** Rows still to publish. */
  pending(): Promise<number>;
  teardown(): Promise<void>;
}

/** The database server's CPU over a drain, in µs by part (e.g. `pg`, `pgRelay`), and other sessions seen. */
export interface DatabaseCpu {
  readonly parts: Readonly<Record<string, number>>;
  readonly otherSessions?: number;
  /** Server-wide counters over the drain (MariaDB: statements, row operations), reported per 1,000 messages. */
  readonly counts?: Readonly<Record<string, number>>;
}

export interface DatabaseCpuMeter {
  start(): Promise<void> | void;
  stop(relayPid: number): Promise<DatabaseCpu>;
}

/** One database of (l): how its two sides are set up, and how its server's CPU is read. */
export interface FloorDatabase {
  readonly kind: FloorDatabaseKind;
  readonly label: string;
  /** Its CPU parts (metric stems: `pg` → pgUsPerMsg), the first judged by the database CPU target; none for SQLite. */
  readonly cpuParts: readonly string[];
  /** Null where the server's processes cannot be read (or, SQLite, there is no server). */
  readonly meter: DatabaseCpuMeter | null;
  readonly notes: readonly string[];
  contestant(side: FloorSide, run: FloorRun): FloorContestant;
}

export interface Drain {
  readonly seconds: number;
  /** COMMIT to the broker holding the first message (asked every 50 ms): the relay's wake-up. */
  readonly firstSeconds: number;
  readonly emptySeconds: number;
  readonly stored: number;
  readonly pending: number;
  readonly exitCode: number | null;
  readonly database: DatabaseCpu | null;
  readonly relayCpu: number;
  readonly brokerCpu: number | null;
  readonly peakRssMb: number;
  readonly note: string;
}

/** The side's row name: PostgreSQL's keep the names of the runs before the other databases joined. */
export function floorName(side: FloorSide, database: FloorDatabase): string {
  const base = side === 'ideal' ? 'ideal relay' : 'outboxer relay (CLI)';
  if (database.kind === 'postgres') return base;
  return side === 'ideal' ? `${base} (${database.label})` : `outboxer relay (CLI, ${database.label})`;
}

export async function waitFor(read: () => Promise<number>, done: (value: number) => boolean, pollMs: number, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let value = await read();
  while (!done(value) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    value = await read();
  }
  return value;
}

/** `outboxer relay` on `databaseUrl` with the library's defaults, publishing to the run's broker resources. */
export function startOutboxerRelay(run: FloorRun, databaseUrl: string, extra: readonly string[] = []): Promise<RelayProcess> {
  return startRelayProcess(run.cliMain, ['--database-url', databaseUrl, ...extra, ...brokerFlags(run.target), ...engineCliFlags(run.sizes.engine)]);
}

/** `outboxer migrate` on `databaseUrl`: the table outboxer's own migration creates, as an operator makes it. */
export async function migrateWithCli(run: FloorRun, databaseUrl: string): Promise<void> {
  await promisify(execFile)(process.execPath, [run.cliMain, 'migrate', '--database-url', databaseUrl], { timeout: 60_000 });
}

/** Resolves once one relay holds every partition (`held` of `partitions`, read by `read`). */
async function untilEveryPartitionHeld(read: () => Promise<{ partitions: number; held: number }>): Promise<void> {
  let last = { partitions: 0, held: 0 };
  const missing = await waitFor(
    async () => {
      last = await read();
      return last.partitions === 0 ? Number.NaN : last.partitions - last.held;
    },
    (v) => v === 0,
    25,
    30_000,
  );
  if (missing !== 0) throw new Error(`the relay holds ${last.held} of ${last.partitions} partitions after 30 s`);
}

/** The ideal relay process on `databaseUrl` (ideal-relay.ts), publishing to the run's broker resources. */
export function startIdealRelayProcess(run: FloorRun, databaseUrl: string, extra: readonly string[] = []): Promise<RelayProcess> {
  const { target } = run;
  return startNodeProcess(
    [
      run.idealMain,
      '--database-url',
      databaseUrl,
      ...extra,
      '--broker',
      target.kind,
      '--window',
      String(OUTBOXER_RELAY_SETTINGS.maxInFlight),
      ...(target.kind === 'rabbitmq' ? ['--broker-url', services.amqpUrl, '--exchange', target.resource] : ['--broker-url', services.natsUrl]),
    ],
    IDEAL_READY,
    'ideal relay',
  );
}

/** What a database the CLI reaches by its URL alone (MariaDB, SQLite) gives `urlSide`. */
export interface UrlSideTable {
  /** The ideal relay's table (ideal-relay-tables.ts), in the side's own database or file. */
  createIdealTable(): Promise<void>;
  /** Partitions of outboxer's table, and how many of them a relay holds. */
  partitions(): Promise<{ partitions: number; held: number }>;
}

/**
 * Setting up and starting one side on a database named by its URL: outboxer's table by `outboxer migrate`, then
 * `outboxer relay` until it holds every partition; or the ideal relay's table, then the ideal relay.
 */
export function urlSide(side: FloorSide, run: FloorRun, url: string, table: UrlSideTable): Pick<FloorContestant, 'setup' | 'start'> {
  if (side === 'ideal') return { setup: () => table.createIdealTable(), start: () => startIdealRelayProcess(run, url) };
  return {
    setup: () => migrateWithCli(run, url),
    async start() {
      const relay = await startOutboxerRelay(run, url);
      await untilEveryPartitionHeld(() => table.partitions());
      return relay;
    },
  };
}
