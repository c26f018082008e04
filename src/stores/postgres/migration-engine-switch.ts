import { quoteIdentifier } from '../../core/identifiers.js';
import { leaseTables } from './leases/lease-tables.js';
import type { TableName } from './sql.js';

/**
 * Migration 8, expand only, for resizes and for the switch from engine v1 (which migration 14 removed, with
 * `v1_fenced_at` and the fence function):
 * - `resize_to` in the partitioning row: set while a resize waits for every partition to be given back; grants
 *   are closed while it is set;
 * - `v1_fenced_at`: when the fence last turned a v1 claim into a no-op;
 * - `outboxer_fence_v1()`, the function of the fence triggers that the switch to v2 created.
 */
export function engineSwitchMigration(name: TableName): string {
  const s = quoteIdentifier(name.schema);
  const { partitioning } = leaseTables(name);
  return `
ALTER TABLE ${partitioning}
  ADD COLUMN IF NOT EXISTS resize_to integer CHECK (resize_to BETWEEN 1 AND 1024),
  ADD COLUMN IF NOT EXISTS v1_fenced_at timestamptz;

-- The fence of engine v1 (triggers created by the switch to v2; TG_ARGV[0] names the table's partitioning table):
-- * a v1 claim (an update that sets a new lease_token) is skipped, so a v1 relay of any version gets nothing, and
--   the time is recorded, at most once a second;
-- * an insert that leases its row (an older in-process hand-off) commits it as a plain row, its attempt uncounted;
-- * a row made to wait through available_at only (an older writer, plain SQL, an older relay's backoff) gets
--   due_at = available_at, so the v2 read path does not publish it early.
CREATE OR REPLACE FUNCTION ${s}.outboxer_fence_v1() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.lease_token IS NOT NULL AND NEW.lease_token IS DISTINCT FROM OLD.lease_token THEN
    EXECUTE format('UPDATE %I.%I SET v1_fenced_at = now() WHERE v1_fenced_at IS NULL OR v1_fenced_at < now() - interval ''1 second''',
      TG_TABLE_SCHEMA, TG_ARGV[0]);
    RETURN NULL;
  END IF;
  IF TG_OP = 'INSERT' AND (NEW.lease_token IS NOT NULL OR NEW.lease_owner IS NOT NULL OR NEW.lease_until IS NOT NULL) THEN
    NEW.lease_owner := NULL;
    NEW.lease_token := NULL;
    NEW.lease_until := NULL;
    NEW.attempts := greatest(NEW.attempts - 1, 0);
  END IF;
  IF NEW.state = 'pending' AND NEW.available_at > clock_timestamp() AND (NEW.due_at IS NULL OR NEW.due_at < NEW.available_at) THEN
    NEW.due_at := NEW.available_at;
  END IF;
  RETURN NEW;
END
$fn$;
`;
}
