import { OutboxerError } from '../../../core/errors.js';
import type { HeldPartition, LiveRelay, Membership } from '../../../core/ports.js';
import type { SqliteDatabase } from '../database.js';
import type { SqliteTableNames } from '../table-names.js';

interface ConfigRow {
  partition_count: number;
  generation: number;
  resize_to: number | null;
  grants_open: number;
}

/**
 * Reads one relay's view of the group at `now` (the database clock of the caller's transaction or read): the live
 * relays with their holdings, my partitions, what an acquire could grant (free partitions of the current
 * generation and those of relays whose lease ran out, which the acquire reaps first), and the partitioning config.
 * `alive` is decided by the caller when it just wrote my row (a heartbeat), otherwise read here.
 */
export function readMembership(database: SqliteDatabase, names: SqliteTableNames, relayId: string, now: number, alive?: boolean): Membership {
  const { relays, partitions, partitioning } = names;
  const config = database.get(`SELECT partition_count, generation, resize_to, resize_to IS NULL AS grants_open FROM ${partitioning}`) as ConfigRow | undefined;
  if (config === undefined) {
    throw new OutboxerError(
      'OUTBOXER_NOT_MIGRATED',
      `SQLite outbox table ${names.outbox} is not migrated (its partitioning row is missing): run 'outboxer migrate' with the same file and table (or store.migrate())`,
    );
  }
  const live = database.all(
    `SELECT r.relay_id AS id, r.name, r.leaving, r.expires_at,
      (SELECT t.trouble FROM ${names.relayTrouble} t WHERE t.relay_id = r.relay_id) AS trouble,
      (SELECT count(*) FROM ${partitions} p WHERE p.owner = r.relay_id) AS held
    FROM ${relays} r WHERE r.expires_at > ? ORDER BY r.relay_id`,
    [now],
  );
  const owned = database.all(
    `SELECT partition_no AS partition, CAST(epoch AS TEXT) AS epoch, state, unclean
    FROM ${partitions} WHERE owner = ? ORDER BY partition_no`,
    [relayId],
  );
  const grantable = database.get(
    `SELECT count(*) AS n FROM ${partitions} p, ${partitioning} c
    WHERE p.generation = c.generation
      AND (p.owner IS NULL OR p.owner NOT IN (SELECT relay_id FROM ${relays} WHERE expires_at > ?))`,
    [now],
  );
  const relayViews: LiveRelay[] = live.map((r) => ({
    id: String(r.id),
    name: String(r.name),
    leaving: Number(r.leaving) !== 0,
    held: Number(r.held),
    expiresInMs: Math.max(0, Number(r.expires_at) - now),
    trouble: typeof r.trouble === 'string' ? r.trouble : null,
  }));
  return {
    relayId,
    alive: alive ?? relayViews.some((r) => r.id === relayId),
    relays: relayViews,
    owned: owned.map((p) => ({ partition: Number(p.partition), epoch: String(p.epoch), state: p.state as HeldPartition['state'], unclean: Number(p.unclean) })),
    grantable: Number(grantable?.n ?? 0),
    config: {
      partitionCount: Number(config.partition_count),
      generation: Number(config.generation),
      resizeTo: config.resize_to === null ? null : Number(config.resize_to),
      grantsOpen: Number(config.grants_open) !== 0,
    },
  };
}
