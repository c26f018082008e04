/**
 * MariaDB/MySQL and SQLite migration 6: `engine` and `fence_until` leave `<t>_partitioning` (engine v1's, never used
 * on these databases). A table at version 5 with a live partitioning row and pending rows upgrades through `migrate`
 * and through the printed script applied twice: the columns go, the row keeps its values, relays then lease and drain.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import { applyMysqlMigrations } from '../../src/stores/mysql/migration-runner.js';
import { mysqlMigrations, resolvedMysqlMigrations } from '../../src/stores/mysql/migrations.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { mysqlTableNames } from '../../src/stores/mysql/table-names.js';
import { applySqliteMigrations } from '../../src/stores/sqlite/migration-runner.js';
import { resolvedSqliteMigrations, sqliteMigrations } from '../../src/stores/sqlite/migrations.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { sqliteTableNames } from '../../src/stores/sqlite/table-names.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { applyMysqlScript } from '../support/mysql-script.js';
import { v2Timing } from '../support/partition-relay-fixture.js';
import { RecordingPublisher } from '../support/recording-publisher.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import { waitFor } from '../support/wait-for.js';

const PARTITIONS = 8;
const ROWS = 40;

/** A table of one database at schema version 5, with what the test reads and writes on it in plain SQL. */
interface TableAt5 {
  readonly store: MysqlOutboxStore | SqliteOutboxStore;
  /** The latest migration version of the dialect. */
  readonly latest: number;
  sql(text: string): Promise<readonly Record<string, unknown>[]>;
  /** The columns of `outbox_partitioning`, in table order. */
  partitioningColumns(): Promise<string[]>;
  /** Applies a whole script as a DBA's client would. */
  applyScript(script: string): Promise<void>;
  cleanup(): Promise<void>;
}

async function mariadbAt5(): Promise<TableAt5> {
  const fresh = await freshMysqlDatabase('mig6');
  const names = mysqlTableNames('outbox');
  const at5 = resolvedMysqlMigrations(names, { partitionCount: PARTITIONS }).filter((m) => m.version <= 5);
  expect(await applyMysqlMigrations(fresh.database, names, names.table, at5)).toEqual([1, 2, 3, 4, 5]);
  return {
    store: new MysqlOutboxStore(fresh.database, { partitionCount: PARTITIONS }),
    latest: Math.max(...mysqlMigrations.map((m) => m.version)),
    sql: (text) => fresh.sql(text),
    async partitioningColumns() {
      const rows = await fresh.sql(`SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS
        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'outbox_partitioning' ORDER BY ORDINAL_POSITION`);
      return rows.map((row) => String(row.name));
    },
    applyScript: (script) => applyMysqlScript(fresh.url, script),
    cleanup: fresh.cleanup,
  };
}

async function sqliteAt5(): Promise<TableAt5> {
  const file = freshSqliteFile('mig6');
  const names = sqliteTableNames('outbox');
  const at5 = resolvedSqliteMigrations(names, { partitionCount: PARTITIONS }).filter((m) => m.version <= 5);
  expect(await applySqliteMigrations(file.database(), names, names.table, at5)).toEqual([1, 2, 3, 4, 5]);
  const handle = file.connect();
  return {
    store: new SqliteOutboxStore(file.database(), { partitionCount: PARTITIONS }),
    latest: Math.max(...sqliteMigrations.map((m) => m.version)),
    sql: async (text) =>
      text.trimStart().toUpperCase().startsWith('SELECT') ? (handle.prepare(text).all() as Record<string, unknown>[]) : (handle.exec(text), []),
    partitioningColumns: async () =>
      (handle.prepare(`SELECT name FROM pragma_table_info('outbox_partitioning') ORDER BY cid`).all() as { name: string }[]).map((row) => row.name),
    async applyScript(script) {
      handle.exec(script);
    },
    cleanup: file.cleanup,
  };
}

/** Pending rows (keyed and unkeyed), and a partitioning row that is not the one migration 1 wrote. */
async function liveTable(db: TableAt5): Promise<void> {
  const key = db.store instanceof MysqlOutboxStore ? '`key`' : '"key"';
  const values = Array.from({ length: ROWS }, (_, i) => `('t', ${i % 2 === 0 ? `'k${i % 5}'` : 'NULL'}, 'x', '{"n": ${i}}')`);
  await db.sql(`INSERT INTO outbox (topic, ${key}, type, payload) VALUES ${values.join(', ')}`);
  await db.sql('UPDATE outbox_partitions SET generation = 2');
  await db.sql('UPDATE outbox_partitioning SET generation = 2, resize_to = 4');
  expect(await db.partitioningColumns()).toEqual(['singleton', 'engine', 'partition_count', 'generation', 'fence_until', 'resize_to']);
}

async function versions(db: TableAt5): Promise<number[]> {
  return (await db.sql(`SELECT version FROM outboxer_migrations WHERE table_name = 'outbox' ORDER BY version`)).map((row) => Number(row.version));
}

/** Upgraded: the two columns gone, the row's values kept, every version recorded; the start check passes. */
async function expectUpgraded(db: TableAt5): Promise<void> {
  expect(await db.partitioningColumns()).toEqual(['singleton', 'partition_count', 'generation', 'resize_to']);
  const config = await db.sql('SELECT singleton, partition_count, generation, resize_to FROM outbox_partitioning');
  expect(config.map((row) => Object.values(row).map(Number))).toEqual([[1, PARTITIONS, 2, 4]]);
  expect(await versions(db)).toEqual(Array.from({ length: db.latest }, (_, i) => i + 1));
  await expect(db.store.verify()).resolves.toBeUndefined();
}

/** While `resize_to` is set nothing is granted; once cleared, a relay of this version leases and drains every row. */
async function expectRelaysDrain(db: TableAt5): Promise<void> {
  const joined = await db.store.leases.join({ name: 'mig6', leaseMs: 5000 });
  expect(joined.config).toEqual({ partitionCount: PARTITIONS, generation: 2, resizeTo: 4, grantsOpen: false });
  expect(await db.store.leases.acquire(joined.relayId, PARTITIONS)).toEqual([]);
  await db.store.leases.leave(joined.relayId);
  await db.sql('UPDATE outbox_partitioning SET resize_to = NULL');

  const publisher = new RecordingPublisher();
  const relay =
    db.store instanceof MysqlOutboxStore ? new Outbox(db.store).createRelay(publisher, v2Timing) : new Outbox(db.store).createRelay(publisher, v2Timing);
  relay.start();
  try {
    await waitFor(() => publisher.delivered.length >= ROWS, { timeoutMs: 30_000, what: `${ROWS} messages at the publisher` });
  } finally {
    await relay.stop();
  }
  expect(new Set(publisher.delivered.map((m) => m.id)).size).toBe(ROWS);
  const pending = await db.sql(`SELECT COUNT(*) AS n FROM outbox WHERE state = 'pending'`);
  expect(Number(pending[0]?.n)).toBe(0);
}

describe.each([
  ['MariaDB', mariadbAt5],
  ['SQLite', sqliteAt5],
])('migration 6, engine v1 columns dropped (%s)', (_name, open) => {
  let db: TableAt5 | undefined;
  afterEach(async () => {
    await db?.cleanup();
    db = undefined;
  });

  it('upgrades a live table at version 5 through migrate: the columns go, the values stay, relays lease and drain', async () => {
    db = await open();
    await liveTable(db);
    await expect(db.store.verify()).rejects.toMatchObject({ code: 'OUTBOXER_NOT_MIGRATED', message: expect.stringContaining('versions 6 of 6 are missing') });
    await db.store.migrate();
    await db.store.migrate();
    await expectUpgraded(db);
    await expectRelaysDrain(db);
  });

  it('upgrades it through the printed script applied twice, which keeps the one-row checks', async () => {
    db = await open();
    await liveTable(db);
    const script = db.store.migrationSql();
    await db.applyScript(script);
    await db.applyScript(script);
    await expectUpgraded(db);
    await expect(db.sql('INSERT INTO outbox_partitioning (singleton) VALUES (2)')).rejects.toThrow();
    await expect(db.sql('UPDATE outbox_partitioning SET resize_to = 2000')).rejects.toThrow();
    await expectRelaysDrain(db);
  });
});
