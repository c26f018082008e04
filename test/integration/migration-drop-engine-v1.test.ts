/**
 * Migration 14: what only engine v1 needed leaves the table, on a table `migrate` creates now and on one migrated to
 * 13 by an earlier build (rebuilt here in SQL: the lease columns, `available_at`, the v1 claim indexes, fillfactor 70,
 * the fence triggers and the partitioning row's engine columns). Also the printed script, applied twice.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { applyMigrations } from '../../src/stores/postgres/migration-runner.js';
import { migrations, migrationScript } from '../../src/stores/postgres/migrations.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { resolveTableName, type TableName } from '../../src/stores/postgres/sql.js';
import { pgliteSchema, postgresSchema, type SchemaDatabase } from '../support/schema-databases.js';

let db: SchemaDatabase | undefined;
afterEach(async () => {
  await db?.cleanup();
  db = undefined;
});

const V1_COLUMNS = ['lease_owner', 'lease_token', 'lease_until', 'available_at'];
const V1_CONFIG_COLUMNS = ['engine', 'fence_until', 'v1_fenced_at'];

/** A table at schema version 13 as an earlier build left it: engine v1's columns, indexes, triggers and settings. */
async function tableAt13WithV1(db: SchemaDatabase, name: TableName, engine: 'v1' | 'v2'): Promise<void> {
  expect(
    await applyMigrations(
      db.database,
      name,
      migrations.filter((m) => m.version <= 13),
    ),
  ).toHaveLength(13);
  const t = `"${name.schema}"."${name.table}"`;
  const statements = [
    `ALTER TABLE ${t} ADD COLUMN lease_owner text, ADD COLUMN lease_token uuid, ADD COLUMN lease_until timestamptz,
      ADD COLUMN available_at timestamptz NOT NULL DEFAULT clock_timestamp(), SET (fillfactor = 70)`,
    `CREATE INDEX ${name.table}_pending_key_idx ON ${t} (key, seq) WHERE state = 'pending' AND key IS NOT NULL`,
    `CREATE INDEX ${name.table}_pending_unkeyed_idx ON ${t} (seq) WHERE state = 'pending' AND key IS NULL`,
    `ALTER TABLE "${name.schema}".${name.table}_partitioning ADD COLUMN IF NOT EXISTS v1_fenced_at timestamptz`,
    `UPDATE "${name.schema}".${name.table}_partitioning SET engine = '${engine}'`,
  ];
  if (engine === 'v2') {
    for (const on of ['insert', 'update']) {
      statements.push(
        `CREATE TRIGGER ${name.table}_fence_v1_${on} BEFORE ${on.toUpperCase()} ON ${t} FOR EACH ROW EXECUTE FUNCTION "${name.schema}".outboxer_fence_v1('${name.table}_partitioning')`,
      );
    }
  }
  for (const statement of statements) await db.sql(statement);
}

/** What of engine v1 a table still has. */
async function leftovers(db: SchemaDatabase, name: TableName) {
  const columns = async (table: string, wanted: string[]) =>
    (
      await db.sql(
        `SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped AND attname = ANY($2) ORDER BY attname`,
        [`"${name.schema}"."${table}"`, wanted],
      )
    ).map((row) => row.attname);
  const [options] = await db.sql(`SELECT reloptions FROM pg_class WHERE oid = to_regclass($1)`, [`"${name.schema}"."${name.table}"`]);
  return {
    columns: await columns(name.table, V1_COLUMNS),
    configColumns: await columns(`${name.table}_partitioning`, V1_CONFIG_COLUMNS),
    indexes: (
      await db.sql(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname IN ($2, $3) ORDER BY 1`, [
        name.schema,
        `${name.table}_pending_key_idx`,
        `${name.table}_pending_unkeyed_idx`,
      ])
    ).map((row) => row.indexname),
    triggers: (
      await db.sql(`SELECT tgname FROM pg_trigger WHERE tgrelid = to_regclass($1) AND tgname LIKE '%fence%'`, [`"${name.schema}"."${name.table}"`])
    ).map((row) => row.tgname),
    fenceFunction: (await db.sql(`SELECT to_regprocedure($1) IS NOT NULL AS present`, [`"${name.schema}".outboxer_fence_v1()`]))[0]?.present,
    reloptions: options?.reloptions ?? null,
  };
}

const NONE = { columns: [], configColumns: [], indexes: [], triggers: [], fenceFunction: false, reloptions: null };

describe.each([
  ['PostgreSQL (pg)', postgresSchema],
  ['PGlite (embedded)', pgliteSchema],
])('migration 14, engine v1 removed (%s)', (_name, open) => {
  it('a table migrate creates has none of engine v1, and migrating it again applies nothing', async () => {
    db = await open('nov1');
    const store = new PostgresOutboxStore(db.database, { schema: db.schema });
    await store.migrate();
    expect(await leftovers(db, store.tableName)).toEqual(NONE);
    expect(await applyMigrations(db.database, store.tableName, migrations)).toEqual([]);
  });

  it('a table an earlier build left at 13 loses every leftover; a row delayed through available_at alone keeps its delay', async () => {
    db = await open('oldv1');
    const name = resolveTableName(db.schema, 'outbox');
    await tableAt13WithV1(db, name, 'v1');
    const [delayed, plain] = await db.sql(`INSERT INTO "${db.schema}".outbox (topic, type, payload, available_at) VALUES
        ('t', 'x', '1', now() + interval '1 hour'), ('t', 'x', '2', now()) RETURNING id::text AS id`);
    expect(await applyMigrations(db.database, name, migrations)).toEqual([14, 15]);
    expect(await leftovers(db, name)).toEqual(NONE);
    const rows = await db.sql(
      `SELECT id::text AS id, due_at > now() + interval '59 minutes' AS later, due_at IS NULL AS fresh FROM "${db.schema}".outbox ORDER BY seq`,
    );
    expect(rows).toEqual([
      { id: delayed?.id, later: true, fresh: false },
      { id: plain?.id, later: null, fresh: true },
    ]);
  });

  it('keeps the delay of a row that a switch to v2 left unscanned (fence_until infinity)', async () => {
    db = await open('halfv2');
    const name = resolveTableName(db.schema, 'outbox');
    await tableAt13WithV1(db, name, 'v1');
    const [delayed] = await db.sql(
      `INSERT INTO "${db.schema}".outbox (topic, type, payload, available_at) VALUES ('t', 'x', '1', now() + interval '1 hour') RETURNING id::text AS id`,
    );
    // what the switch's first transaction left when its process ended before the scan
    await db.sql(`UPDATE "${db.schema}".outbox_partitioning SET engine = 'v2', fence_until = 'infinity'`);
    expect(await applyMigrations(db.database, name, migrations)).toEqual([14, 15]);
    expect(await db.sql(`SELECT id::text AS id, due_at > now() + interval '59 minutes' AS later FROM "${db.schema}".outbox`)).toEqual([
      { id: delayed?.id, later: true },
    ]);
  });

  it('keeps the fence function while another table of the schema still has triggers on it, and drops it with the last', async () => {
    db = await open('twov1');
    const first = resolveTableName(db.schema, 'outbox');
    const second = resolveTableName(db.schema, 'orders_outbox');
    await tableAt13WithV1(db, first, 'v2');
    await tableAt13WithV1(db, second, 'v2');
    await applyMigrations(db.database, first, migrations);
    expect(await leftovers(db, first)).toEqual({ ...NONE, fenceFunction: true });
    await applyMigrations(db.database, second, migrations);
    expect(await leftovers(db, second)).toEqual(NONE);
  });
});

describe('migration 14 in the printed script (PostgreSQL)', () => {
  it('leaves a new table without engine v1, and applied again changes nothing', async () => {
    db = await postgresSchema('scriptv1');
    const name = resolveTableName(db.schema, 'outbox');
    await db.sql(migrationScript(name));
    expect(await leftovers(db, name)).toEqual(NONE);
    await db.sql(migrationScript(name));
    expect(await leftovers(db, name)).toEqual(NONE);
    const versions = await db.sql(`SELECT max(version) AS latest FROM "${db.schema}".outboxer_migrations WHERE table_name = 'outbox'`);
    expect(versions[0]?.latest).toBe(migrations.at(-1)?.version);
  });

  it('removes the leftovers of a table an earlier build left at 13', async () => {
    db = await postgresSchema('scriptold');
    const name = resolveTableName(db.schema, 'outbox');
    await tableAt13WithV1(db, name, 'v2');
    await db.sql(migrationScript(name));
    expect(await leftovers(db, name)).toEqual(NONE);
  });
});
