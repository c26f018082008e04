import { quoteIdentifier } from '../../core/identifiers.js';
import { leaseTables } from './leases/lease-tables.js';
import type { TableName } from './sql.js';

/**
 * Migration 7, the read path of engine v2 (docs/design/read-path.md, "Read path" and "Late commits"), expand only: v1
 * relays neither read nor write `due_at`, and the trigger only assigns the inserting transaction its xid a
 * little earlier than its first row would. Each step takes a short lock on the outbox (no row is rewritten);
 * the indexes come after the transaction (`readPathIndexes`).
 */
export function readPathMigration(name: TableName): string {
  const s = quoteIdentifier(name.schema);
  const t = `${s}.${quoteIdentifier(name.table)}`;
  const trigger = quoteIdentifier(`${name.table}_xid_first`);
  return `
-- Scheduled rows (backoff, hold, producer delay): NULL in normal flow, so reads of fresh rows skip nothing.
ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS due_at timestamptz;

-- The late-commit proof needs seq handed out in time order, one value at a time (no per-session cache).
ALTER TABLE ${t} ALTER COLUMN seq SET CACHE 1;

-- Every inserting transaction takes its xid before it draws its first seq: a row that commits below a read's
-- position then has an xid below the read's tag, and the recheck waits for it (docs/design/read-path.md, "Late commits").
CREATE OR REPLACE FUNCTION ${s}.outboxer_xid_first() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_current_xact_id();
  RETURN NULL;
END
$fn$;
DROP TRIGGER IF EXISTS ${trigger} ON ${t};
CREATE TRIGGER ${trigger} BEFORE INSERT ON ${t} FOR EACH STATEMENT EXECUTE FUNCTION ${s}.outboxer_xid_first();
`;
}

/**
 * The read path's indexes, as rows `(name, definition)` of what follows `CREATE INDEX <name>`, for the partition
 * count configured now (`<t>_partitioning`). All three scan the whole table to build, so `migrate` builds them
 * `CONCURRENTLY` after its transaction (see `migration-runner.ts`):
 * - `<t>_p<P>_idx`: pending rows by partition and seq, the fresh and recheck branches;
 * - `<t>_p<P>_due_idx`: the same for scheduled rows only (sparse), the due branch;
 * - `<t>_due_key_idx`: scheduled rows by key and seq (sparse), the hold probe (`waitsFor`).
 */
export function readPathIndexes(name: TableName): string {
  const t = `${quoteIdentifier(name.schema)}.${quoteIdentifier(name.table)}`;
  return `${partitionIndexes(name, 'c.partition_count', `FROM ${leaseTables(name).partitioning} c`)}
UNION ALL
SELECT '${name.table}_due_key_idx', 'ON ${t} (key, seq) WHERE state = ''pending'' AND due_at IS NOT NULL'`;
}

/**
 * The two indexes that depend on the partition count, `<t>_p<P>_idx` and `<t>_p<P>_due_idx`, as rows
 * `(name, definition)`; `count` is a SQL expression of the count (a column of `from`, or a literal for a resize).
 */
export function partitionIndexes(name: TableName, count: string, from = ''): string {
  const s = quoteIdentifier(name.schema);
  const t = `${s}.${quoteIdentifier(name.table)}`;
  const partition = `${s}.outboxer_partition(key, id, ' || ${count} || ')`;
  return `SELECT '${name.table}_p' || ${count} || '_idx' AS name,
    'ON ${t} (${partition}, seq) WHERE state = ''pending''' AS definition
  ${from}
UNION ALL
SELECT '${name.table}_p' || ${count} || '_due_idx',
    'ON ${t} (${partition}, seq) WHERE state = ''pending'' AND due_at IS NOT NULL'
  ${from}`;
}
