import type { OutboxStore, PartitionReader } from '../../src/core/ports.js';

/** A row as a plain-SQL producer or trigger writes it: only the columns it must give, the rest defaulted. */
export interface PlainRow {
  readonly topic: string;
  readonly type: string;
  /** The JSON body as text. */
  readonly payload: string;
  readonly key?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly destination?: string;
}

/**
 * What the store conformance suite needs beyond the port, to reach states that otherwise take time or a
 * failure: each database's harness implements these once, so the suite itself holds no SQL. All times are
 * on the database clock.
 */
export interface TestControls {
  /** Every pending message waiting for its time (a delay, a backoff, a paused topic) is due now. */
  makeAvailableNow(): Promise<void>;
  /** Parks every message as dead with `reason`, as if each had failed for good just now. */
  parkAllAsDead(reason: string): Promise<void>;
  /** Inserts rows the way a plain-SQL producer does, outside the store (the table contract). */
  insertPlain(rows: readonly PlainRow[]): Promise<void>;
  /** Every message was created `seconds` ago. */
  ageCreated(seconds: number): Promise<void>;
  /** Every published message was published `seconds` ago. */
  agePublished(seconds: number): Promise<void>;
  /** Every pending message is published now, as a store that retains published rows marks it. */
  markAllPublished(): Promise<void>;
  /** Every idempotency key was recorded `seconds` ago. */
  ageIdempotencyKeys(seconds: number): Promise<void>;
  /** How many messages the store holds, in any state. */
  rowCount(): Promise<number>;
}

/** One database under the store conformance suite. */
export interface StoreEnvironment<Tx = unknown> {
  /** The store, with the partition reader a relay reads it through. */
  readonly store: OutboxStore<Tx> & { readonly reader: PartitionReader };
  /** Runs `work` in a transaction that commits, or rolls back when `work` throws. */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  readonly controls: TestControls;
  cleanup(): Promise<void>;
}

export interface StoreHarness<Tx = unknown> {
  readonly name: string;
  setup(options?: { retainPublishedMs?: number }): Promise<StoreEnvironment<Tx>>;
}

/** A SQL database under the suites that check its table itself (plain-SQL producers, constraints). */
export interface SqlStoreEnvironment<Tx = unknown> extends StoreEnvironment<Tx> {
  /** Plain SQL on the database, outside any transaction. */
  sql(text: string, params?: unknown[]): Promise<readonly Record<string, unknown>[]>;
  /** The quoted, schema-qualified outbox table, for plain-SQL producers in tests. */
  readonly table: string;
  /**
   * The body suite writes PostgreSQL's spelling (`$1`, `'\\x00'::bytea`, `::jsonb`): a harness of another SQL
   * database rewrites it in `sql`, and says here how its table words its refusals.
   */
  readonly refusals: TableRefusals;
}

/** What a database's table says when it refuses a plain-SQL row, as the body suite matches it. */
export interface TableRefusals {
  /** A header whose value is a JSON `kind` (number, null, object) instead of a string. */
  headerNotString(name: string, kind: string): RegExp;
  /** Headers that are not a JSON object. */
  readonly headersNotObject: RegExp;
  /** No body, or both a JSON and a binary body. */
  readonly oneBody: RegExp;
  /** A content type that is no media type, or not a JSON type for a JSON body. */
  readonly contentType: RegExp;
  /** A JSON body that does not parse. */
  readonly payloadNotJson: RegExp;
}

export interface SqlStoreHarness<Tx = unknown> extends StoreHarness<Tx> {
  setup(options?: { retainPublishedMs?: number }): Promise<SqlStoreEnvironment<Tx>>;
}
