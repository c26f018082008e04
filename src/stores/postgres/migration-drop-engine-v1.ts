import { quoteIdentifier } from '../../core/identifiers.js';
import { leaseTables } from './leases/lease-tables.js';
import type { TableName } from './sql.js';

/**
 * Migration 14, contract: what only engine v1 needed leaves the table (docs/history/engine-v1.md). Engine
 * v1 claimed rows one by one under a lease on the row; no relay of this package runs it, and it was never released.
 * Every pending insert wrote an index no read of engine v2 uses (one of two: keyed or unkeyed rows), and carried the
 * v1 fence triggers and 30 % free space per page for v1's in-place claims: measured, a plain-SQL bulk insert cost 16.5 µs per row with them against
 * 13.2 without, and the heap was 1.4 times the size.
 *
 * - A table still at engine v1 (one no `migrate` created since engine v2, never switched), or one whose switch to v2
 *   ended before its scan of the pending rows (`fence_until = 'infinity'`), moves to v2 here as the switch did: a
 *   row delayed through `available_at` alone gets `due_at`, and grants open. Grants do not wait for leases a v1
 *   relay may still hold: no released version runs engine v1.
 * - The fence triggers go, then the fence function once no other table of the schema uses it.
 * - The v1 claim indexes (`<t>_pending_key_idx`, `<t>_pending_unkeyed_idx`), the row lease (`lease_owner`,
 *   `lease_token`, `lease_until`) and `available_at` go; so do `engine`, `fence_until` and `v1_fenced_at` of the
 *   partitioning row.
 * - The table's `fillfactor` returns to the default: v2 deletes published rows, and its retry updates change
 *   indexed columns, so they could not stay on their page anyway.
 * Dropping a column or an index is a catalog change: quick on a table of any size, under a short exclusive lock.
 */
export function dropEngineV1Migration(name: TableName): string {
  const s = quoteIdentifier(name.schema);
  const t = `${s}.${quoteIdentifier(name.table)}`;
  const { partitioning } = leaseTables(name);
  const index = (suffix: string) => `${s}.${quoteIdentifier(`${name.table}_${suffix}`)}`;
  const trigger = (suffix: string) => quoteIdentifier(`${name.table}_fence_v1_${suffix}`);
  return `
DO $v1$
DECLARE
  unswitched boolean;
BEGIN
  -- the columns are gone once this ran: the printed script, applied again, must find nothing to do
  IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('${partitioning}') AND attname = 'engine' AND NOT attisdropped)
    AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('${t}') AND attname = 'available_at' AND NOT attisdropped) THEN
    -- still at v1, or a switch to v2 that ended before its scan of the pending rows (fence_until 'infinity')
    EXECUTE 'SELECT engine = ''v1'' OR fence_until = ''infinity'' FROM ${partitioning}' INTO unswitched;
    IF unswitched THEN
      EXECUTE 'UPDATE ${t} SET due_at = available_at
        WHERE state = ''pending'' AND available_at > now() AND (due_at IS NULL OR due_at < available_at)';
    END IF;
  END IF;
END
$v1$;

DROP TRIGGER IF EXISTS ${trigger('insert')} ON ${t};
DROP TRIGGER IF EXISTS ${trigger('update')} ON ${t};
DO $fence$
BEGIN
  IF to_regprocedure('${s}.outboxer_fence_v1()') IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgfoid = to_regprocedure('${s}.outboxer_fence_v1()')) THEN
    DROP FUNCTION ${s}.outboxer_fence_v1();
  END IF;
END
$fence$;

DROP INDEX IF EXISTS ${index('pending_key_idx')};
DROP INDEX IF EXISTS ${index('pending_unkeyed_idx')};
ALTER TABLE ${t}
  DROP COLUMN IF EXISTS lease_owner,
  DROP COLUMN IF EXISTS lease_token,
  DROP COLUMN IF EXISTS lease_until,
  DROP COLUMN IF EXISTS available_at,
  RESET (fillfactor);
ALTER TABLE ${partitioning} DROP COLUMN IF EXISTS v1_fenced_at, DROP COLUMN IF EXISTS engine, DROP COLUMN IF EXISTS fence_until;
`;
}
