import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { applyMigrations } from '../../src/stores/postgres/migration-runner.js';
import { migrations } from '../../src/stores/postgres/migrations.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { resolveTableName } from '../../src/stores/postgres/sql.js';
import { validateMessage } from '../../src/core/validate-message.js';
import { relayEveryRow } from '../support/relay-every-row.js';
import { readFromStart } from '../support/partition-relay-fixture.js';
import { pgliteSchema, postgresSchema, type SchemaDatabase } from '../support/schema-databases.js';
import { services, uniqueName } from '../support/services.js';

/** The SQL block that follows the "tested by" marker in docs/table.md, exactly as a reader copies it. */
function triggerRecipe(): string {
  const doc = readFileSync(new URL('../../docs/table.md', import.meta.url), 'utf8');
  const match = /<!-- tested by test\/integration\/table-contract\.test\.ts[^>]*-->\n```sql\n([\s\S]*?)```/.exec(doc);
  if (match?.[1] === undefined) throw new Error('docs/table.md has no tested trigger recipe');
  return match[1];
}

/** The first SQL block of docs/table.md: the inserts a SQL producer copies. */
function producerInserts(): string {
  const match = /```sql\n([\s\S]*?)```/.exec(readFileSync(new URL('../../docs/table.md', import.meta.url), 'utf8'));
  if (match?.[1] === undefined) throw new Error('docs/table.md has no SQL block');
  return match[1];
}

describe('the SQL of docs/table.md and of the contract, on real PostgreSQL', () => {
  let pool: pg.Pool | undefined;
  let schema = '';
  afterEach(async () => {
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool?.end();
    pool = undefined;
  });

  it('relays the documented inserts with their bodies as written', async () => {
    schema = uniqueName('doc_sql');
    pool = new pg.Pool({ connectionString: services.postgresUrl, max: 1 });
    const store = new PostgresOutboxStore(fromPgPool(pool), { schema });
    await store.migrate();
    await pool.query(`SET search_path TO "${schema}"`);
    await pool.query(producerInserts());
    const messages = await readFromStart(store.reader);
    expect(messages.map((m) => [m.key, m.contentType, m.headers])).toEqual([
      [null, 'application/json', {}],
      ['order-7', 'application/json', { tenant: 'acme' }],
      [null, 'application/x-protobuf', {}],
    ]);
    expect(messages.map((m) => (typeof m.body === 'string' ? m.body : Buffer.from(m.body).toString('hex')))).toEqual(['{"id": 7}', '{"id": 7}', '0a03666f6f']);
  });

  it('produces valid headers whether the settings are set, never set, or were set earlier in the session', async () => {
    schema = uniqueName('recipe');
    // One connection, as one application session: settings made in it stay visible to later statements.
    pool = new pg.Pool({ connectionString: services.postgresUrl, max: 1 });
    const client = pool;
    const store = new PostgresOutboxStore(fromPgPool(pool), { schema });
    await store.migrate();
    await client.query(`SET search_path TO "${schema}"`);
    await client.query('CREATE TABLE orders (id int PRIMARY KEY, total numeric NOT NULL)');
    await client.query(triggerRecipe());

    await client.query('INSERT INTO orders VALUES (1, 9.90)'); // never set in this session
    await client.query(`BEGIN; SET LOCAL app.tenant = 'acme'; SET LOCAL app.correlation_id = 'c-2'; INSERT INTO orders VALUES (2, 5); COMMIT`);
    await client.query('INSERT INTO orders VALUES (3, 1)'); // set earlier in the session: now '' rather than NULL

    expect((await readFromStart(store.reader)).map((m) => [m.key, m.headers, m.body])).toEqual([
      ['order-1', {}, '{"orderId" : 1, "total" : "9.90"}'],
      ['order-2', { tenant: 'acme', 'correlation-id': 'c-2' }, '{"orderId" : 2, "total" : "5"}'],
      ['order-3', {}, '{"orderId" : 3, "total" : "1"}'],
    ]);
  });

  it('the contract function means the same with standard_conforming_strings off, and compiles without a warning about escapes', async () => {
    schema = uniqueName('scs_off');
    pool = new pg.Pool({ connectionString: services.postgresUrl, max: 1 });
    await new PostgresOutboxStore(fromPgPool(pool), { schema }).migrate();
    const client = await pool.connect();
    const notices: string[] = [];
    client.on('notice', (notice) => notices.push(notice.message ?? ''));
    try {
      // the function's body is parsed in the writer's session, with the writer's settings
      await client.query('DISCARD PLANS; SET standard_conforming_strings = off; SET escape_string_warning = on');
      await client.query(`INSERT INTO "${schema}".outbox (topic, type, payload, headers) VALUES ('orders', 'x', '{}', '{"tenant": "acme"}')`);
      await expect(
        client.query(`INSERT INTO "${schema}".outbox (topic, type, payload, headers) VALUES ('orders', 'x', '{}', E'{"tenant": "a\\\\nb"}')`),
      ).rejects.toMatchObject({ code: '23514' });
      expect(notices).toEqual([]);
    } finally {
      client.release();
    }
  });
});

describe.each([
  ['PostgreSQL (pg)', postgresSchema],
  ['PGlite (embedded)', pgliteSchema],
])('upgrading a table at version 4 with pending rows (%s)', (_name, open) => {
  let db: SchemaDatabase | undefined;
  afterEach(async () => {
    await db?.cleanup();
    db = undefined;
  });

  it('migrates to exact bodies, keeps every pending row relayable and brings old headers into the contract', async () => {
    db = await open('upgrade');
    const name = resolveTableName(db.schema, 'outbox');
    const table = `"${db.schema}"."outbox"`;
    expect(
      await applyMigrations(
        db.database,
        name,
        migrations.filter((m) => m.version <= 4),
      ),
    ).toEqual([1, 2, 3, 4]);
    await db.sql(`INSERT INTO ${table} (topic, key, type, payload, headers) VALUES
      ('t', 'k', 'x', '{"b":1,"a":"\\u00e9"}', '{"retry": 3, "gone": null, "ok": "y", "flag": true}'),
      ('t', 'k', 'x', '[1, 2]', '{}')`);
    await db.sql(`UPDATE ${table} SET state = 'dead', dead_at = now(), last_error = 'old' WHERE payload = '[1, 2]'::jsonb`);

    const store = new PostgresOutboxStore(db.database, { schema: db.schema });
    await store.migrate();
    await store.migrate();
    const versions = await db.sql(`SELECT version FROM "${db.schema}".outboxer_migrations ORDER BY version`);
    expect(versions.map((row) => row.version)).toEqual(migrations.map((m) => m.version));
    expect(await store.retryDead('all')).toBe(1);
    const fresh = validateMessage({ topic: 't', key: 'k', type: 'x', payload: { b: 1, a: 'é' } }, { maxPayloadBytes: 1024 });
    await db.database.transaction((tx) => store.insert(tx, [fresh]));

    const bodies = (await relayEveryRow(db.database, db.schema, 3)).map((m) => [m.body, m.contentType, m.headers]);
    expect(bodies).toEqual([
      ['{"a": "é", "b": 1}', 'application/json', { retry: '3', ok: 'y', flag: 'true' }],
      ['[1, 2]', 'application/json', {}],
      ['{"b":1,"a":"é"}', 'application/json', {}],
    ]);
  });

  it("migration 15 takes the WHEN clause off an earlier build's contract trigger; the function alone still refuses and accepts", async () => {
    db = await open('when15');
    const name = resolveTableName(db.schema, 'outbox');
    const table = `"${db.schema}"."outbox"`;
    const triggerDef = async () =>
      (await db!.sql(`SELECT pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE tgrelid = '${table}'::regclass AND tgname = 'outbox_contract'`))[0]?.def;
    expect(
      await applyMigrations(
        db.database,
        name,
        migrations.filter((m) => m.version <= 14),
      ),
    ).toHaveLength(14);
    expect(await triggerDef()).not.toContain(' WHEN ');
    // the trigger as builds before migration 15 left it: a WHEN clause in front of the same function
    await db.sql(`DROP TRIGGER outbox_contract ON ${table}`);
    await db.sql(`CREATE TRIGGER outbox_contract BEFORE INSERT OR UPDATE OF topic, type, key, headers, destination ON ${table} FOR EACH ROW
        WHEN (NEW.topic !~ '^[a-z]' OR NEW.headers <> '{}'::jsonb) EXECUTE FUNCTION "${db.schema}".outboxer_check_message()`);
    expect(await triggerDef()).toContain(' WHEN ');
    const store = new PostgresOutboxStore(db.database, { schema: db.schema });
    await store.migrate();
    expect(await triggerDef()).not.toContain(' WHEN ');
    await expect(db.sql(`INSERT INTO ${table} (topic, type, payload) VALUES ('orders', 'x', '{}'), ('orders', '', '{}')`)).rejects.toMatchObject({
      code: '23514',
    });
    await expect(db.sql(`INSERT INTO ${table} (topic, type, payload, headers) VALUES ('orders', 'x', '{}', '{"bad name": "v"}')`)).rejects.toMatchObject({
      code: '23514',
    });
    await db.sql(
      `INSERT INTO ${table} (topic, type, payload, headers) VALUES ('orders', 'x', '{}', '{"tenant": "acme", "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}')`,
    );
    expect((await db.sql(`SELECT count(*)::int AS n FROM ${table}`))[0]?.n).toBe(1);
  });
});
