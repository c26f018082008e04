import type { OutboxStore } from '../../src/core/ports.js';
import type { SqlExecutor } from '../../src/stores/postgres/database.js';

/** One database under the store conformance suite. */
export interface StoreEnvironment {
  readonly store: OutboxStore<SqlExecutor>;
  /** Runs `work` in a transaction that commits, or rolls back when `work` throws. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Plain SQL on the database, outside any transaction. */
  sql(text: string, params?: unknown[]): Promise<readonly Record<string, unknown>[]>;
  /** The quoted, schema-qualified outbox table, for plain-SQL producers in tests. */
  readonly table: string;
  cleanup(): Promise<void>;
}

export interface StoreHarness {
  readonly name: string;
  setup(options?: { retainPublishedMs?: number }): Promise<StoreEnvironment>;
}
