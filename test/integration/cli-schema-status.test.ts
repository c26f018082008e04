import { describe, expect, it } from 'vitest';
import { relayHoldReason } from '../../src/core/topic-pauses.js';
import { cliFixtures } from '../support/cli-fixtures.js';
import { cliEnv, runCli } from '../support/cli-runner.js';
import { services } from '../support/services.js';
import { migrations } from '../../src/stores/postgres/migrations.js';

const { pool, freshSchema, migrated, insert, enqueue, countRows } = cliFixtures();

describe('outboxer CLI: schema', () => {
  it('sql prints DDL that needs no database and applies cleanly, twice, to a fresh schema', async () => {
    // A database URL in the environment is ignored by `sql`, and its short password does not garble the DDL.
    const { schema, env } = freshSchema({ OUTBOXER_DATABASE_URL: 'postgres://postgres:out@127.0.0.1:1/test' });
    const result = await runCli(['sql', '--table', 'events_outbox'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^-- outboxer schema for /);
    expect(result.stdout).toContain(`CREATE TABLE IF NOT EXISTS "${schema}"."events_outbox"`);
    await pool.query(result.stdout);
    await pool.query(result.stdout);
    const tables = await pool.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`, [schema]);
    expect(tables.rows.map((row: { table_name: string }) => row.table_name)).toEqual([
      'events_outbox',
      'events_outbox_idempotency',
      'events_outbox_partitioning',
      'events_outbox_partitions',
      'events_outbox_paused_destinations',
      'events_outbox_paused_topics',
      'events_outbox_relays',
      'outboxer_migrations',
    ]);
    await pool.query(`INSERT INTO "${schema}".events_outbox (topic, type, payload) VALUES ('t', 'x', '{}')`);
    // migrate agrees that the script brought the table up to date.
    const migrate = await runCli(['migrate', '--table', 'events_outbox'], cliEnv({ OUTBOXER_DATABASE_URL: services.postgresUrl, OUTBOXER_SCHEMA: schema }));
    expect(migrate.code, migrate.stderr).toBe(0);
    expect(migrate.stdout).toContain('up to date');
  });

  it('migrate creates the table, and a second run changes nothing', async () => {
    const { schema, env, table } = freshSchema();
    const first = await runCli(['migrate'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`applied migration 1 to ${schema}.outbox`);
    expect(first.stdout).toContain(`applied migration 2 to ${schema}.outbox`);
    await insert(table, 2);
    const second = await runCli(['migrate'], env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain(`${schema}.outbox is up to date`);
    expect(await countRows(table)).toBe(2);
    const versions = await pool.query(`SELECT version FROM "${schema}".outboxer_migrations WHERE table_name = 'outbox' ORDER BY version`);
    expect(versions.rows).toEqual(migrations.map((m) => ({ version: m.version })));
  });
});

describe('outboxer CLI: status', () => {
  it('counts a row a relay holds back for later (due_at) as scheduled, not pending', async () => {
    const { env, table } = await migrated();
    await pool.query(`INSERT INTO ${table} (topic, type, payload) VALUES ('t', 'x', '{}')`);
    // what a completion writes for a retried failure or a paused topic
    await pool.query(
      `INSERT INTO ${table} (topic, type, payload, due_at) VALUES ('t', 'x', '{}', now() + interval '1 hour'), ('t', 'x', '{}', now() - interval '1 second')`,
    );
    const json = await runCli(['status', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ pending: 2, scheduled: 1 });
  });

  it('shows the partitions and the relays, and says no topic or destination is paused', async () => {
    const { env } = await migrated();
    const text = await runCli(['status'], env);
    expect(text.code, text.stderr).toBe(0);
    // a word: the schema's random name may hold "v1"
    expect(text.stdout).not.toMatch(/in flight|\bv1\b/);
    expect(text.stdout).toMatch(
      /\nengine v2: 64 partitions, generation 1\nlive relays: none\nunowned partitions: 64\npaused topics: none\npaused destinations: none\n$/,
    );
    // the JSON keeps every field, for scripts
    expect(JSON.parse((await runCli(['status', '--json'], env)).stdout)).toEqual({
      pending: 0,
      scheduled: 0,
      published: 0,
      dead: 0,
      oldestPendingAgeSeconds: 0,
      engine: { partitionCount: 64, generation: 1, resizeTo: null, relays: [], unownedPartitions: 64, lapsedPartitions: 0 },
      pausedTopics: [],
      pausedDestinations: [],
    });
  });

  it("still shows the relays' pauses on a table without the list of operator pauses (schema version 9)", async () => {
    const { env, schema, table } = await migrated();
    await pool.query(`DROP TABLE "${schema}".outbox_paused_topics`);
    await pool.query(`INSERT INTO ${table} (topic, type, payload, due_at, last_error) VALUES ('audit.log', 'x', '{}', now() + interval '1 hour', $1)`, [
      relayHoldReason(new Date('2026-11-25T16:30:00.000Z'), 'OUTBOXER_NO_STREAM: no stream'),
    ]);
    const json = await runCli(['status', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).pausedTopics).toEqual([
      { topic: 'audit.log', destination: null, pausedBy: 'relay', reason: 'OUTBOXER_NO_STREAM: no stream', pausedAt: '2026-11-25T16:30:00.000Z', held: 1 },
    ]);
  });

  it('shows the destination each relay pause holds: a topic fanned out is held per destination', async () => {
    const { env, schema, table } = await migrated();
    const [own, partner] = await enqueue(schema, [{ topic: 'audit.log' }, { topic: 'audit.log', destination: 'partner' }]);
    const since = new Date('2026-11-25T16:30:00.000Z');
    await pool.query(`UPDATE ${table} SET due_at = now() + interval '1 hour', last_error = $2 WHERE id = $1`, [
      partner,
      relayHoldReason(since, 'OUTBOXER_NO_STREAM: no stream'),
    ]);
    const [json, text] = await Promise.all([runCli(['status', '--json'], env), runCli(['status'], env)]);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      pending: 1,
      scheduled: 1,
      pausedTopics: [
        { topic: 'audit.log', destination: 'partner', pausedBy: 'relay', reason: 'OUTBOXER_NO_STREAM: no stream', pausedAt: since.toISOString(), held: 1 },
      ],
    });
    expect(text.stdout).toMatch(
      /\npaused topics:\ntopic\s+destination\s+paused by\s+paused at\s+reason\naudit\.log\s+partner\s+relay\s+2026-11-25T16:30:00\.000Z\s+destination missing: OUTBOXER_NO_STREAM: no stream \(1 message\(s\) held\)\n/,
    );
    expect(await countRows(table, `id = '${own}' AND destination IS NULL`)).toBe(1);
  });

  it('counts rows inserted with plain SQL in every state, as JSON and as a table', async () => {
    const { env, table } = await migrated();
    await pool.query(`INSERT INTO ${table} (topic, type, payload, created_at) VALUES ('t', 'x', '{}', now() - interval '2 minutes')`);
    await pool.query(`INSERT INTO ${table} (topic, type, payload) VALUES ('t', 'x', '{}'), ('t', 'x', '{}')`);
    await pool.query(`INSERT INTO ${table} (topic, type, payload, due_at) VALUES ('t', 'x', '{}', now() + interval '1 hour')`);
    await pool.query(`INSERT INTO ${table} (topic, type, payload, state, published_at) VALUES ('t', 'x', '{}', 'published', now())`);
    await pool.query(`INSERT INTO ${table} (topic, type, payload, state, dead_at, last_error)
      VALUES ('t', 'x', '{}', 'dead', now(), 'a'), ('t', 'x', '{}', 'dead', now(), 'b')`);
    const json = await runCli(['status', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    const stats = JSON.parse(json.stdout) as Record<string, number>;
    expect(stats).toMatchObject({ pending: 3, scheduled: 1, published: 1, dead: 2 });
    expect(stats.oldestPendingAgeSeconds).toBeGreaterThanOrEqual(120);
    expect(stats.oldestPendingAgeSeconds).toBeLessThan(600);
    const text = await runCli(['status'], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/pending\s+3/);
    expect(text.stdout).toMatch(/scheduled\s+1/);
    expect(text.stdout).toMatch(/dead\s+2/);
    expect(text.stdout).toMatch(/oldest pending message: 2m \d+s old/);
  });
});
