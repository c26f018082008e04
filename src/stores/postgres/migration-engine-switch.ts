import { quoteIdentifier } from '../../core/identifiers.js';
import { leaseTables } from './leases/lease-tables.js';
import type { TableName } from './sql.js';

/**
 * Migration 8, expand only, for the switch to engine v2 and for resizes (docs/upgrading-to-engine-v2.md):
 * - `resize_to` in the partitioning row: set while a resize waits for every partition to be given back; grants
 *   are closed while it is set;
 * - `v1_fenced_at`: when the fence last turned a v1 claim into a no-op (the contract step reads it);
 * - `outboxer_fence_v1()`, the function of the fence triggers. The triggers themselves are not created here but by
 *   `switchEngine`, in the transaction that sets `engine = 'v2'`: a row trigger that is inert under v1 would still
 *   run (and read the partitioning row) on every v1 insert and claim, and creating the trigger is what waits out
 *   the v1 claims and inserts in flight (its lock conflicts with every writer's), so it belongs to the switch.
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

/** The names of the two fence triggers of a table (unquoted, as `pg_trigger` shows them). */
export function fenceTriggerNames(name: TableName): readonly [insert: string, update: string] {
  return [`${name.table}_fence_v1_insert`, `${name.table}_fence_v1_update`];
}

/**
 * The fence triggers, created by the switch to v2 (its lock, SHARE ROW EXCLUSIVE, waits for every transaction
 * that wrote the outbox and holds off new writers until the switch commits; readers go on) and dropped by a switch
 * back. Each calls its function only when its `WHEN` sees a v1 write: a v2 writer's insert (no lease, `due_at` set
 * when delayed, `available_at` at most the insert's clock) and a v2 completion (neither column changes) never do.
 */
export function fenceTriggersSql(name: TableName, action: 'create' | 'drop'): string {
  const s = quoteIdentifier(name.schema);
  const t = `${s}.${quoteIdentifier(name.table)}`;
  const [onInsert, onUpdate] = fenceTriggerNames(name).map(quoteIdentifier) as [string, string];
  if (action === 'drop') return `DROP TRIGGER IF EXISTS ${onInsert} ON ${t};\nDROP TRIGGER IF EXISTS ${onUpdate} ON ${t};`;
  const argument = `'${name.table}_partitioning'`;
  return `CREATE TRIGGER ${onInsert} BEFORE INSERT ON ${t} FOR EACH ROW
  WHEN (NEW.lease_token IS NOT NULL OR NEW.lease_owner IS NOT NULL OR NEW.lease_until IS NOT NULL
    OR (NEW.available_at > clock_timestamp() AND (NEW.due_at IS NULL OR NEW.due_at < NEW.available_at)))
  EXECUTE FUNCTION ${s}.outboxer_fence_v1(${argument});
CREATE TRIGGER ${onUpdate} BEFORE UPDATE ON ${t} FOR EACH ROW
  WHEN (NEW.lease_token IS DISTINCT FROM OLD.lease_token OR NEW.available_at IS DISTINCT FROM OLD.available_at)
  EXECUTE FUNCTION ${s}.outboxer_fence_v1(${argument});`;
}

/**
 * How a table that `migrate` creates from scratch starts: under engine v2, its fence triggers on and grants open
 * (`fence_until = '-infinity'`), as a finished switch leaves it. No v1 relay can have claimed a row of a table that
 * did not exist, so there is nothing to fence or wait for. A table that existed keeps its engine.
 */
export function newTableEngineSql(name: TableName): string {
  return `${fenceTriggersSql(name, 'create')}
UPDATE ${leaseTables(name).partitioning} SET engine = 'v2', fence_until = '-infinity';`;
}
