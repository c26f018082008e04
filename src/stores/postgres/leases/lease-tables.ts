import { quoteIdentifier } from '../../../core/identifiers.js';
import type { TableName } from '../sql.js';

/**
 * The quoted, schema-qualified side tables of one outbox table. A table name is at most 40 bytes
 * (`resolveTableName`), so the longest, `<table>_partitioning_pkey`, stays within PostgreSQL's 63.
 */
export interface LeaseTables {
  /** One row: the partition count and generation, and the count a waiting resize moves to. */
  readonly partitioning: string;
  /** One row per running relay incarnation, with its lease on the database clock. */
  readonly relays: string;
  /** One row per partition: its owner (NULL when free), state, and the epoch that fences the owner's writes. */
  readonly partitions: string;
}

export function leaseTables({ schema, table }: TableName): LeaseTables {
  const qualified = (suffix: string) => `${quoteIdentifier(schema)}.${quoteIdentifier(`${table}_${suffix}`)}`;
  return Object.freeze({ partitioning: qualified('partitioning'), relays: qualified('relays'), partitions: qualified('partitions') });
}

/**
 * One lease statement: its SQL for a table's side tables and its parameters in placeholder order, kept together
 * in one file with the reasoning (graphile-worker style).
 */
export interface LeaseStatement<Args extends readonly unknown[]> {
  readonly sql: (tables: LeaseTables) => string;
  readonly params: (...args: Args) => unknown[];
}
