import type { EngineRelays } from '../../../core/ports/partition-engine.js';
import type { SqlExecutor } from '../database.js';
import { leaseTables } from '../leases/lease-tables.js';
import type { TableName } from '../sql.js';

/**
 * A relay's reported trouble (migration 11), read through the row as JSON so that `status` also reads a table
 * migrated by an earlier version, which has no such columns (they read as NULL then).
 */
export const TROUBLE_COLUMNS = `to_jsonb(r) ->> 'trouble' AS trouble,
  floor(extract(epoch FROM (to_jsonb(r) ->> 'trouble_since')::timestamptz) * 1000) AS trouble_since_ms`;

interface GroupRow {
  relays: {
    id: string;
    name: string;
    leaving: boolean;
    held: number | string;
    leaseLeftMs: number | string;
    trouble: string | null;
    troubleSinceMs: number | string | null;
  }[];
  unowned: number;
  lapsed: number;
}

/**
 * Reads the live relays and the partitions nobody live holds, in one statement that writes nothing (no relays row:
 * unlike `RelayLeases.membership`, it needs no relay of its own). Needs migration 6 (the side tables).
 */
export async function readEngineRelays(executor: SqlExecutor, name: TableName): Promise<EngineRelays> {
  const { relays, partitions, partitioning } = leaseTables(name);
  const result = await executor.query(
    `WITH live AS (SELECT relay_id, name, leaving, expires_at, ${TROUBLE_COLUMNS} FROM ${relays} r WHERE expires_at > now())
    SELECT
      (SELECT COALESCE(json_agg(json_build_object(
          'id', r.relay_id, 'name', r.name, 'leaving', r.leaving, 'trouble', r.trouble, 'troubleSinceMs', r.trouble_since_ms,
          'held', (SELECT count(*) FROM ${partitions} p WHERE p.owner = r.relay_id),
          'leaseLeftMs', greatest(0, floor(extract(epoch FROM r.expires_at - clock_timestamp()) * 1000))) ORDER BY r.name, r.relay_id), '[]'::json)
        FROM live r) AS relays,
      (SELECT count(*)::int FROM ${partitions} p
        WHERE p.generation = c.generation AND (p.owner IS NULL OR p.owner NOT IN (SELECT relay_id FROM live))) AS unowned,
      (SELECT count(*)::int FROM ${partitions} p
        WHERE p.generation = c.generation AND p.owner IS NOT NULL AND p.owner NOT IN (SELECT relay_id FROM live)) AS lapsed
    FROM ${partitioning} c`,
  );
  const row = result.rows[0] as GroupRow | undefined;
  if (row === undefined) return { relays: [], unowned: 0, lapsed: 0 };
  return {
    relays: row.relays.map((relay) => ({
      id: relay.id,
      name: relay.name,
      leaving: relay.leaving,
      held: Number(relay.held),
      leaseLeftMs: Number(relay.leaseLeftMs),
      trouble: relay.trouble === null ? null : { reason: relay.trouble, since: new Date(Number(relay.troubleSinceMs)) },
    })),
    unowned: row.unowned,
    lapsed: row.lapsed,
  };
}
