import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { applyMigrations } from '../../src/stores/postgres/migration-runner.js';
import { migrations, migrationScript } from '../../src/stores/postgres/migrations.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { resolveTableName } from '../../src/stores/postgres/sql.js';
import { cliEnv, runCli } from '../support/cli-runner.js';
import { pgliteSchema, postgresSchema, type SchemaDatabase } from '../support/schema-databases.js';
import { services } from '../support/services.js';
import { msg } from '../conformance/store-conformance.js';
import { relayEveryRow } from '../support/relay-every-row.js';

const READ_PATH_INDEXES = ['outbox_due_key_idx', 'outbox_p64_due_idx', 'outbox_p64_idx'];

/** The read path's indexes as the catalog shows them: name, valid, and the oid (a rebuild changes it). */
async function readPathIndexes(db: SchemaDatabase) {
  return db.sql(
    `SELECT c.relname AS name, i.indisvalid AS valid, c.oid::int8::text AS oid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = $1) AND c.relname = ANY($2) ORDER BY 1`,
    [db.schema, READ_PATH_INDEXES],
  );
}

/** Whether an insert of no row takes an xid: only the statement trigger makes it. */
async function emptyInsertTakesXid(db: SchemaDatabase): Promise<boolean> {
  return db.database.transaction(async (tx) => {
    await tx.query(`INSERT INTO "${db.schema}".outbox (topic, type, payload) SELECT 't', 'x', '{}' WHERE false`);
    const found = await tx.query('SELECT pg_current_xact_id_if_assigned() IS NOT NULL AS assigned');
    return (found.rows[0] as { assigned: boolean }).assigned;
  });
}

async function upgradedShape(db: SchemaDatabase) {
  const [shape] = await db.sql(
    `SELECT
      (SELECT array_agg(version ORDER BY version) FROM "${db.schema}".outboxer_migrations WHERE table_name = 'outbox') AS versions,
      (SELECT seqcache FROM pg_sequence WHERE seqrelid = pg_get_serial_sequence($1, 'seq')::regclass)::int AS cache,
      (SELECT count(*)::int FROM pg_trigger WHERE tgrelid = $1::regclass AND tgname = 'outbox_xid_first') AS triggers,
      (SELECT data_type FROM information_schema.columns WHERE table_schema = $2 AND table_name = 'outbox' AND column_name = 'due_at') AS due_at`,
    [`"${db.schema}".outbox`, db.schema],
  );
  return shape;
}

/** The delayed insert of docs/table.md, exactly as a reader copies it. */
function delayRecipe(): string {
  const doc = readFileSync(new URL('../../docs/table.md', import.meta.url), 'utf8');
  const match = /tested by test\/integration\/migration-read-path\.test\.ts.*\n```sql\n([\s\S]*?)```/.exec(doc);
  if (match?.[1] === undefined) throw new Error('docs/table.md has no tested delay recipe');
  return match[1];
}

describe('migration 7, the read path', () => {
  let db: SchemaDatabase | undefined;
  afterEach(async () => {
    await db?.cleanup();
    db = undefined;
  });

  it('upgrades a table with pending rows from two processes at once; a relay then relays every row', async () => {
    db = await postgresSchema('mig7');
    const name = resolveTableName(db.schema, 'outbox');
    expect(
      await applyMigrations(
        db.database,
        name,
        migrations.filter((m) => m.version <= 6),
      ),
    ).toEqual([1, 2, 3, 4, 5, 6]);
    await db.sql(`INSERT INTO "${db.schema}".outbox (topic, key, type, payload)
      SELECT 't', CASE WHEN n % 2 = 0 THEN 'k' || (n % 10) END, 'x', json_build_object('n', n) FROM generate_series(1, 2000) AS n`);
    expect(await emptyInsertTakesXid(db)).toBe(false);
    await db.sql(`ALTER TABLE "${db.schema}".outbox ALTER COLUMN seq SET CACHE 20`);

    const env = cliEnv({ OUTBOXER_DATABASE_URL: services.postgresUrl, OUTBOXER_SCHEMA: db.schema });
    const runs = await Promise.all([runCli(['migrate'], env), runCli(['migrate'], env)]);
    expect(runs.map((run) => [run.code, run.stderr])).toEqual([
      [0, ''],
      [0, ''],
    ]);

    expect(await upgradedShape(db)).toEqual({ versions: migrations.map((m) => m.version), cache: 1, triggers: 1, due_at: 'timestamp with time zone' });
    expect((await readPathIndexes(db)).map((i) => [i.name, i.valid])).toEqual(READ_PATH_INDEXES.map((n) => [n, true]));
    expect(await emptyInsertTakesXid(db)).toBe(true);

    const store = new PostgresOutboxStore(db.database, { schema: db.schema });
    await db.database.transaction((tx) => store.insert(tx, [msg('t', 'k1'), msg('t', null, {}, { delayMs: 1 })]));
    const relayed = await relayEveryRow(db.database, db.schema, 2002);
    expect(new Set(relayed.map((m) => m.id)).size).toBe(2002);
  });

  it('rebuilds an index left INVALID by an interrupted concurrent build', async () => {
    db = await postgresSchema('mig7');
    const store = new PostgresOutboxStore(db.database, { schema: db.schema });
    await store.migrate();
    const [before] = await readPathIndexes(db);
    await db.sql(`UPDATE pg_index SET indisvalid = false WHERE indexrelid = $1::regclass`, [`"${db.schema}".${String(before?.name)}`]);
    expect((await readPathIndexes(db))[0]?.valid).toBe(false);
    await store.migrate();
    const [after] = await readPathIndexes(db);
    expect(after).toMatchObject({ name: before?.name, valid: true });
    expect(after?.oid).not.toBe(before?.oid);
  });

  it('the printed script applies cleanly to an empty schema, twice, and leaves the table as migrate does', async () => {
    db = await postgresSchema('mig7');
    const script = migrationScript(resolveTableName(db.schema, 'outbox'));
    expect(script).toContain('CREATE INDEX IF NOT EXISTS');
    await db.sql(script);
    await db.sql(script);
    expect(await upgradedShape(db)).toEqual({ versions: migrations.map((m) => m.version), cache: 1, triggers: 1, due_at: 'timestamp with time zone' });
    expect((await readPathIndexes(db)).map((i) => [i.name, i.valid])).toEqual(READ_PATH_INDEXES.map((n) => [n, true]));
    expect(await emptyInsertTakesXid(db)).toBe(true);
    await new PostgresOutboxStore(db.database, { schema: db.schema }).verify();
  });

  it('on PGlite (one session) builds the read path indexes valid, with the trigger and CACHE 1', async () => {
    db = await pgliteSchema('mig7');
    await new PostgresOutboxStore(db.database, { schema: db.schema }).migrate();
    expect(await upgradedShape(db)).toEqual({ versions: migrations.map((m) => m.version), cache: 1, triggers: 1, due_at: 'timestamp with time zone' });
    expect((await readPathIndexes(db)).map((i) => [i.name, i.valid])).toEqual(READ_PATH_INDEXES.map((n) => [n, true]));
    expect(await emptyInsertTakesXid(db)).toBe(true);
  });

  it('the delayed insert of docs/table.md is scheduled: a read does not return it before its time', async () => {
    db = await postgresSchema('mig7');
    const store = new PostgresOutboxStore(db.database, { schema: db.schema });
    await store.migrate();
    await db.sql(delayRecipe().replaceAll('INSERT INTO outbox', `INSERT INTO "${db.schema}".outbox`));
    expect(await db.sql(`SELECT due_at > now() AS scheduled FROM "${db.schema}".outbox`)).toEqual([{ scheduled: true }]);
    const all = Array.from({ length: 64 }, (_, partition) => ({ partition, epoch: '0', after: null, recheck: null, limit: 10 }));
    expect((await store.reader.read('00000000-0000-4000-8000-000000000000', 64, all)).messages).toEqual([]);
  });
});
