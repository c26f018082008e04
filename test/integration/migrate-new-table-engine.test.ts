/**
 * Which engine a table gets from a migration: one that the run creates starts under engine v2 (fence triggers on,
 * grants open); one that existed keeps its engine, since v1 relays may serve it. The same rule for
 * `store.migrate()` and for the printed script (`outboxer sql`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readEngineState } from '../../src/stores/postgres/engine/engine-state.js';
import { applyMigrations } from '../../src/stores/postgres/migration-runner.js';
import { migrations, migrationScript } from '../../src/stores/postgres/migrations.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { resolveTableName } from '../../src/stores/postgres/sql.js';
import { pgliteSchema, postgresSchema, type SchemaDatabase } from '../support/schema-databases.js';

let db: SchemaDatabase | undefined;
afterEach(async () => {
  await db?.cleanup();
  db = undefined;
});

const grantsOpenNow = async (db: SchemaDatabase) =>
  (await db.sql(`SELECT fence_until = '-infinity' AS open FROM "${db.schema}".outbox_partitioning`))[0]?.open;

describe.each([
  ['PostgreSQL (pg)', postgresSchema],
  ['PGlite (embedded)', pgliteSchema],
])('the engine of a migrated table (%s)', (_name, open) => {
  it('a table store.migrate() creates runs engine v2, fenced against v1 claims, with grants open at once', async () => {
    db = await open('neweng');
    const store = new PostgresOutboxStore(db.database, { schema: db.schema });
    await store.migrate();
    expect(await readEngineState(db.database, store.tableName)).toMatchObject({ engine: 'v2', switching: false, fenced: true, lastV1ClaimFencedAt: null });
    expect(await grantsOpenNow(db)).toBe(true);
    await store.migrate();
    expect((await readEngineState(db.database, store.tableName)).engine).toBe('v2');
  });

  it('a table of an earlier version keeps engine v1 through every later migration, and so does one switched back', async () => {
    db = await open('oldeng');
    const name = resolveTableName(db.schema, 'outbox');
    expect(await applyMigrations(db.database, name, migrations.filter((m) => m.version <= 7))).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const store = new PostgresOutboxStore(db.database, { schema: db.schema });
    await store.migrate();
    expect(await readEngineState(db.database, name)).toMatchObject({ engine: 'v1', fenced: false });
    await db.sql(`DELETE FROM "${db.schema}".outboxer_migrations WHERE version = 8`);
    await store.migrate(); // a run that applies only the last migration
    expect(await readEngineState(db.database, name)).toMatchObject({ engine: 'v1', fenced: false });
  });
});

describe('the engine of a table made by the printed script (PostgreSQL)', () => {
  it('starts a table it creates under engine v2, and leaves an existing v1 table at v1 when applied again', async () => {
    db = await postgresSchema('scripteng');
    const name = resolveTableName(db.schema, 'outbox');
    await db.sql(migrationScript(name));
    expect(await readEngineState(db.database, name)).toMatchObject({ engine: 'v2', switching: false, fenced: true });
    expect(await grantsOpenNow(db)).toBe(true);
    await db.sql(migrationScript(name));
    expect(await readEngineState(db.database, name)).toMatchObject({ engine: 'v2', fenced: true });

    await db.cleanup();
    db = await postgresSchema('scripteng');
    const older = resolveTableName(db.schema, 'outbox');
    await applyMigrations(db.database, older, migrations.filter((m) => m.version <= 5));
    await db.sql(migrationScript(older));
    expect(await readEngineState(db.database, older)).toMatchObject({ engine: 'v1', fenced: false });
  });
});
