import { afterEach, describe, expect, it } from 'vitest';
import { applyMigrations } from '../../src/stores/postgres/migration-runner.js';
import { migrations, migrationScript } from '../../src/stores/postgres/migrations.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { resolveTableName } from '../../src/stores/postgres/sql.js';
import { pgliteSchema, postgresSchema, type SchemaDatabase } from '../support/schema-databases.js';
import { relayEveryRow } from '../support/relay-every-row.js';

describe.each([
  ['PostgreSQL (pg)', postgresSchema],
  ['PGlite (embedded)', pgliteSchema],
])('migration 6, the partition leases (%s)', (_name, open) => {
  let db: SchemaDatabase | undefined;
  afterEach(async () => {
    await db?.cleanup();
    db = undefined;
  });

  it('upgrades a table at version 5 with pending rows: 64 partitions wait free, and a relay then relays every row', async () => {
    db = await open('mig6');
    const name = resolveTableName(db.schema, 'outbox');
    const table = `"${db.schema}"."outbox"`;
    expect(
      await applyMigrations(
        db.database,
        name,
        migrations.filter((m) => m.version <= 5),
      ),
    ).toEqual([1, 2, 3, 4, 5]);
    await db.sql(`INSERT INTO ${table} (topic, key, type, payload)
      SELECT 't', CASE WHEN n % 2 = 0 THEN 'k' || (n % 10) END, 'x', json_build_object('n', n) FROM generate_series(1, 200) AS n`);

    const store = new PostgresOutboxStore(db.database, { schema: db.schema });
    await store.migrate();
    await store.migrate();
    const versions = await db.sql(`SELECT version FROM "${db.schema}".outboxer_migrations ORDER BY version`);
    expect(versions.map((row) => row.version)).toEqual(migrations.map((m) => m.version));

    const config = await db.sql(`SELECT partition_count, generation, resize_to FROM "${db.schema}".outbox_partitioning`);
    expect(config).toEqual([{ partition_count: 64, generation: 1, resize_to: null }]);
    const partitions = await db.sql(`SELECT count(*)::int AS n, min(partition) AS lo, max(partition) AS hi,
      bool_and(owner IS NULL AND state = 'free' AND epoch = 0 AND generation = 1) AS free FROM "${db.schema}".outbox_partitions`);
    expect(partitions).toEqual([{ n: 64, lo: 0, hi: 63, free: true }]);

    const relayed = await relayEveryRow(db.database, db.schema, 200);
    expect(new Set(relayed.map((m) => m.id)).size).toBe(200);
  });

  it('computes a row partition in the database: one per key, unkeyed rows spread, the same on every server', async () => {
    db = await open('mig6');
    await new PostgresOutboxStore(db.database, { schema: db.schema }).migrate();
    const table = `"${db.schema}"."outbox"`;
    const partition = `"${db.schema}".outboxer_partition(key, id, 64)`;
    await db.sql(`INSERT INTO ${table} (topic, key, type, payload)
      SELECT 't', CASE WHEN n <= 100 THEN 'k' || (n % 5) END, 'x', '{}' FROM generate_series(1, 400) AS n`);
    const perKey = await db.sql(`SELECT key, count(DISTINCT ${partition})::int AS n FROM ${table} WHERE key IS NOT NULL GROUP BY key`);
    expect(perKey.map((row) => row.n)).toEqual([1, 1, 1, 1, 1]);
    const spread = await db.sql(`SELECT count(DISTINCT ${partition})::int AS n, min(${partition}) AS lo, max(${partition}) AS hi
      FROM ${table} WHERE key IS NULL`);
    expect(spread[0]?.n).toBeGreaterThan(40);
    expect(spread[0]?.lo).toBeGreaterThanOrEqual(0);
    expect(spread[0]?.hi).toBeLessThan(64);
    // Pinned values: an index and every relay depend on them, so a change of hash would move keys between partitions.
    const pinned = await db.sql(`SELECT "${db.schema}".outboxer_partition('order-7', gen_random_uuid(), 64) AS keyed,
      "${db.schema}".outboxer_partition(NULL, '00000000-0000-7000-8000-000000000000', 64) AS unkeyed,
      "${db.schema}".outboxer_partition('k', gen_random_uuid(), 1024) AS wide`);
    expect(pinned).toEqual([{ keyed: 39, unkeyed: 51, wide: 813 }]);
  });
});

describe('migration 6 on PostgreSQL: names and reruns', () => {
  let db: SchemaDatabase | undefined;
  afterEach(async () => {
    await db?.cleanup();
    db = undefined;
  });

  it('gives a 40-byte table name every side table under its full name', async () => {
    db = await postgresSchema('mig6');
    const table = 't'.repeat(40);
    await new PostgresOutboxStore(db.database, { schema: db.schema, table }).migrate();
    const found = await db.sql(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name LIKE 't%' ORDER BY 1`, [db.schema]);
    expect(found.map((row) => row.table_name)).toEqual(
      ['', '_idempotency', '_partitioning', '_partitions', '_paused_destinations', '_paused_topics', '_relays'].map((s) => `${table}${s}`),
    );
    const primaryKeys = await db.sql(`SELECT conname FROM pg_constraint WHERE connamespace = $1::regnamespace AND contype = 'p' ORDER BY 1`, [db.schema]);
    expect(primaryKeys.map((row) => row.conname)).toContain(`${table}_partitioning_pkey`);
    expect(primaryKeys.map((row) => row.conname)).toContain(`${table}_paused_topics_pkey`);
    // `<table>_paused_destinations_pkey` would be 65 bytes: PostgreSQL shortens the name it chooses for the key
    expect(primaryKeys.map((row) => row.conname)).toContain(`${table}_paused_destinatio_pkey`);
  });

  it('applying the printed script again keeps the partitioning, the relays and every partition lease', async () => {
    db = await postgresSchema('mig6');
    const store = new PostgresOutboxStore(db.database, { schema: db.schema });
    const script = migrationScript(store.tableName);
    await db.sql(script);
    const side = (suffix: string) => `"${db?.schema}".outbox_${suffix}`;
    await db.sql(`UPDATE ${side('partitioning')} SET generation = 3`);
    await db.sql(`INSERT INTO ${side('relays')} (relay_id, name, lease_ms, expires_at) VALUES (gen_random_uuid(), 'r', 30000, now() + interval '30 seconds')`);
    await db.sql(`UPDATE ${side('partitions')} SET owner = (SELECT relay_id FROM ${side('relays')}), state = 'owned', epoch = 7 WHERE partition < 2`);
    const before = await db.sql(`SELECT * FROM ${side('partitions')} ORDER BY partition`);
    await db.sql(script);
    expect(await db.sql(`SELECT generation FROM ${side('partitioning')}`)).toEqual([{ generation: 3 }]);
    expect(await db.sql(`SELECT count(*)::int AS n FROM ${side('relays')}`)).toEqual([{ n: 1 }]);
    expect(await db.sql(`SELECT * FROM ${side('partitions')} ORDER BY partition`)).toEqual(before);
  });
});
