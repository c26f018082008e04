import type pg from 'pg';
import type { Publisher } from '../../src/index.js';
import type { Workload } from '../support/workload.js';

/** A relay design under test, over its own schema: outboxer, the naive relay, pg-transactional-outbox. */
export interface RelayContender {
  readonly name: string;
  /** application_name of its relay connections: the query counter attributes statements by it. */
  readonly appName: string;
  /** Creates its own schema and table(s). */
  setup(admin: pg.Client): Promise<void>;
  /** Adds messages first..first+count-1 as committed rows, in bulk (a backlog). */
  load(admin: pg.Client, first: number, count: number): Promise<void>;
  /**
   * Stores message `n` inside the writer's open transaction, as the contender's producer API does; returns its id.
   * A contender with `writer` (not on the bench's PostgreSQL) is never given a pg client: its `enqueue` throws.
   */
  enqueue(client: pg.PoolClient, n: number): Promise<string>;
  /** Called after each writer COMMIT (outboxer: notifyCommitted, its documented fast path). */
  committed(): void;
  /**
   * Optional: runs the writer's transaction itself (BEGIN, `work`, COMMIT) when the contender's producer API
   * owns the transaction, as outboxer's `outbox.transaction` does for its in-process hand-off.
   */
  transaction?<T>(client: pg.PoolClient, work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /**
   * Present when the contender's database is not the bench's PostgreSQL (MariaDB, SQLite): a writer's connection
   * to it, which the writers of (a) to (c) use instead of a client of the bench's pg pool. Its `teardown` closes them.
   */
  writer?(): Promise<ContenderWriter>;
  start(publisher: Publisher): Promise<void>;
  stop(): Promise<void>;
  /** Rows not yet published. */
  pending(admin: pg.Client): Promise<number>;
  /**
   * One claim (or fetch) of up to `limit` messages, undone afterwards: how many it got and how long the claim
   * alone took. Absent for job queues, which are not in scenario (e).
   */
  claimOnce?(limit: number): Promise<{ claimed: number; ms: number }>;
  /** Drops its schema. */
  teardown(admin: pg.Client): Promise<void>;
}

/** One writer's connection on a contender's own database. */
export interface ContenderWriter {
  /**
   * One transaction as the application runs it: begin, enqueue messages `first`..`first + count - 1`, commit, the
   * after-commit call; rolled back when it throws. Returns their ids.
   */
  commit(first: number, count: number): Promise<string[]>;
  release(): void;
}

export interface ContenderOptions {
  readonly workload: Workload;
  /** Connections the relay side may open (the shared server allows the whole bench 40). */
  readonly relayConnections: number;
}

export type ContenderFactory = (options: ContenderOptions) => RelayContender;

/** Names of the outboxer contenders on MariaDB and SQLite. */
export const OUTBOXER_ON = Object.freeze({ mariadb: 'outboxer (MariaDB)', sqlite: 'outboxer (SQLite)' });

/** Whether a contender is outboxer's relay, which the targets are about. */
export function isOutboxerRelay(name: string): boolean {
  return name === 'outboxer' || name === 'outboxer+ops' || name === OUTBOXER_ON.mariadb || name === OUTBOXER_ON.sqlite;
}

/** A target's name for one outboxer contender: as it always was for `outboxer` (PostgreSQL), the contender's name added for the others. */
export function targetFor(contender: string, name: string): string {
  return contender === 'outboxer' ? name : `${name} (${contender})`;
}
