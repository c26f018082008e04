import { OutboxerError } from '../../../core/errors.js';
import type { HeldPartition, LiveRelay, Membership } from '../../../core/ports.js';
import { MYSQL_NOW } from '../migrations.js';
import type { MysqlExecutor } from '../database.js';
import type { MysqlTableNames } from '../table-names.js';

/**
 * The membership of one relay in one statement (one snapshot), writing nothing. The lists travel as JSON arrays
 * (MySQL 8 has no `ORDER BY` inside `JSON_ARRAYAGG`, so they are sorted here); epochs as text. `grantable` counts
 * free partitions of the current generation and those whose owner is no longer live (an acquire reaps that owner
 * first). Time left is measured against the statement's clock, so it never exceeds the lease.
 */
function membershipSql({ relays, partitions, partitioning, relayTrouble }: MysqlTableNames): string {
  return `SELECT
    EXISTS (SELECT 1 FROM ${relays} WHERE relay_id = ? AND expires_at > ${MYSQL_NOW}) AS alive,
    (SELECT JSON_ARRAYAGG(JSON_OBJECT('id', r.relay_id, 'name', r.name, 'leaving', r.leaving <> 0,
        'trouble', (SELECT t.trouble FROM ${relayTrouble} t WHERE t.relay_id = r.relay_id),
        'held', (SELECT COUNT(*) FROM ${partitions} p WHERE p.owner = r.relay_id),
        'expiresInMs', GREATEST(0, FLOOR(TIMESTAMPDIFF(MICROSECOND, ${MYSQL_NOW}, r.expires_at) / 1000))))
      FROM ${relays} r WHERE r.expires_at > ${MYSQL_NOW}) AS relays,
    (SELECT JSON_ARRAYAGG(JSON_OBJECT('partition', p.partition_no, 'epoch', CAST(p.epoch AS CHAR), 'state', p.state, 'unclean', p.unclean))
      FROM ${partitions} p WHERE p.owner = ?) AS owned,
    (SELECT COUNT(*) FROM ${partitions} p WHERE p.generation = c.generation
      AND (p.owner IS NULL OR p.owner NOT IN (SELECT relay_id FROM ${relays} WHERE expires_at > ${MYSQL_NOW}))) AS grantable,
    c.partition_count, c.generation, c.resize_to, c.resize_to IS NULL AS grants_open
  FROM ${partitioning} c`;
}

export async function readMembership(executor: MysqlExecutor, names: MysqlTableNames, relayId: string): Promise<Membership> {
  const { rows } = await executor.query(membershipSql(names), [relayId, relayId]);
  const row = rows[0];
  if (row === undefined) {
    throw new OutboxerError(
      'OUTBOXER_NOT_MIGRATED',
      `outbox table ${names.outbox} is not migrated (its partitioning row is missing): run 'outboxer migrate' with the same database and table (or store.migrate(), or apply 'outboxer sql')`,
    );
  }
  const relays = jsonList<LiveRelay>(row.relays).map((r) => ({
    id: String(r.id),
    name: String(r.name),
    leaving: Boolean(r.leaving),
    held: Number(r.held),
    expiresInMs: Number(r.expiresInMs),
    trouble: typeof r.trouble === 'string' ? r.trouble : null,
  }));
  const owned = jsonList<HeldPartition>(row.owned).map((p) => ({
    partition: Number(p.partition),
    epoch: String(p.epoch),
    state: p.state,
    unclean: Number(p.unclean),
  }));
  return {
    relayId,
    alive: Number(row.alive) === 1,
    relays: relays.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    owned: owned.sort((a, b) => a.partition - b.partition),
    grantable: Number(row.grantable),
    config: {
      partitionCount: Number(row.partition_count),
      generation: Number(row.generation),
      resizeTo: row.resize_to === null || row.resize_to === undefined ? null : Number(row.resize_to),
      grantsOpen: Number(row.grants_open) === 1,
    },
  };
}

/** A JSON_ARRAYAGG column: text (MariaDB), already parsed (MySQL's JSON type), or NULL for no rows. */
function jsonList<T>(value: unknown): T[] {
  if (value === null || value === undefined) return [];
  return (typeof value === 'string' ? JSON.parse(value) : value) as T[];
}
