import { quoteIdentifier } from '../../../core/identifiers.js';
import { leaseTables, type LeaseTables } from '../leases/lease-tables.js';
import type { TableName } from '../sql.js';

/** The outbox table and its side tables, quoted and schema-qualified, for the read path's statements. */
export interface ReaderTables extends LeaseTables {
  readonly outbox: string;
  /** `outboxer_partition(key, id, <partition count>)` of a row alias, as the partition index spells it. */
  partitionOf(row: string, partitionCount: number | string): string;
}

export function readerTables(name: TableName): ReaderTables {
  const schema = quoteIdentifier(name.schema);
  return Object.freeze({
    ...leaseTables(name),
    outbox: `${schema}.${quoteIdentifier(name.table)}`,
    partitionOf: (row: string, partitionCount: number | string) => `${schema}.outboxer_partition(${row}.key, ${row}.id, ${partitionCount})`,
  });
}

/**
 * One read-path statement: its SQL and its parameters in placeholder order, kept together with the reasoning.
 * `partitionCount` is written into the text where an index must match the expression (a parameter would not).
 */
export interface ReaderStatement<Args extends readonly unknown[]> {
  readonly sql: (tables: ReaderTables, partitionCount: number) => string;
  readonly params: (...args: Args) => unknown[];
}
