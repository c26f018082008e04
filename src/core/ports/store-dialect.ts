import type { OutboxerError } from '../errors.js';
import type { Logger, WakeSignal } from '../ports.js';
import type { OutboxOperator } from './outbox-operator.js';
import type { OutboxSchema } from './outbox-schema.js';
import type { PartitionEngine } from './partition-engine.js';
import type { PartitionReader } from './partition-reader.js';
import type { RelayLeases } from './relay-leases.js';
import type { RelayStore } from './relay-store.js';

/**
 * One database as the CLI and the daemon meet it: how to open its store from plain settings, its DDL, and what it
 * can do beyond the store port. Each database's folder holds one (`stores/<db>/<db>-dialect.ts`), and
 * `stores/dialects.ts` lists them by URL scheme; nothing above the stores names a database.
 */
export interface StoreDialect {
  /** `postgres`, `mysql`, `sqlite`: the name in logs and in `--json` output. */
  readonly name: string;
  /** For people: `PostgreSQL`, `MariaDB/MySQL`, `SQLite`. */
  readonly title: string;
  readonly capabilities: DialectCapabilities;
  /**
   * What the relay's start log says of the table beyond its name: where it is (PostgreSQL's schema, MariaDB's
   * database, SQLite's file) and the dialect's own settings. The caller adds the dialect's `name`.
   */
  startLogFields(target: StoreTarget, tuning: StoreTuning): Readonly<Record<string, string | boolean>>;
  /** The DDL `migrate` would apply to a new table, connecting to nothing (`outboxer sql`). */
  migrationScript(target: StoreTarget, partitionCount: number | undefined): string;
  /**
   * A failure of this database's driver or of the network under it, as a stable code with the fix
   * (`OUTBOXER_AUTH_FAILED`, `OUTBOXER_DATABASE_NOT_FOUND`, `OUTBOXER_WRONG_PROTOCOL`, ...); undefined when
   * `error` is not one (an outboxer error, a broker's).
   */
  explainFailure(error: unknown, target: StoreTarget): OutboxerError | undefined;
  /** A store over connections of its own; closing the store ends them. */
  open(target: StoreTarget, settings: StoreConnectionSettings): Promise<OpenedStore>;
}

export interface DialectCapabilities {
  /** Writers in other processes wake the relay at once (PostgreSQL's NOTIFY); elsewhere the relay polls. */
  readonly crossProcessWake: boolean;
  /** The partition count changes on a live table (`migrate --partitions`, `--cancel-resize`); elsewhere it is fixed at creation. */
  readonly resize: boolean;
  /**
   * A second store on connections of its own serves the HTTP server, apart from the relay's; false where a second
   * connection adds nothing (SQLite: every statement runs on the process's one thread).
   */
  readonly separateOperationsStore: boolean;
}

/** The table a command works on: the URL's database, and the schema (PostgreSQL) and table name. */
export interface StoreTarget {
  readonly url: string;
  /** PostgreSQL's schema; the other dialects have none apart from the URL's database or file. */
  readonly schema: string;
  readonly table: string;
}

/** The store settings a command may set; the store's defaults fill the rest. */
export interface StoreTuning {
  readonly retainPublishedMs?: number | undefined;
  readonly idempotencyWindowMs?: number | undefined;
  /** PostgreSQL: named prepared statements (off behind a transaction-mode pooler). */
  readonly preparedStatements?: boolean | undefined;
}

export interface StoreConnectionSettings {
  readonly logger: Logger;
  /** How the connections name themselves to the server (`application_name`), where the dialect has such a name. */
  readonly applicationName: string;
  readonly connections: number;
  /** Each statement ends after this long, where the server can bound it; undefined: the server's setting. */
  readonly statementTimeoutMs?: number | undefined;
  /** The count a new table is created with; undefined: the dialect's default. */
  readonly partitionCount?: number | undefined;
  readonly tuning?: StoreTuning | undefined;
}

/** What every command uses of a store, whatever its database. */
export type DialectStore = RelayStore &
  OutboxOperator &
  OutboxSchema & {
    readonly leases: RelayLeases;
    readonly reader: PartitionReader;
    readonly retainPublishedMs: number;
    readonly idempotencyWindowMs: number;
  };

/** One versioned step of a dialect's schema, as `migrate` reports it. */
export interface MigrationInfo {
  readonly version: number;
  readonly description: string;
}

export interface OpenedStore {
  readonly dialect: StoreDialect;
  readonly store: DialectStore;
  /** Wakes the relay on a hint from writers in other processes; undefined where the dialect has none (the relay polls). */
  readonly wakeSignal: WakeSignal | undefined;
  /** Where the outbox is, for messages: `public.outbox`, `shop.outbox`, `./demo.db outbox`. */
  readonly label: string;
  readonly migrations: readonly MigrationInfo[];
  /** Applies the missing migrations (idempotent, safe side by side); returns the versions applied. */
  migrate(): Promise<readonly number[]>;
  /** The engine of a dialect that resizes live tables (`capabilities.resize`); undefined elsewhere. */
  readonly engine: PartitionEngine | undefined;
}
