import { existsSync, readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, PROMPT_EXIT_MS, startScript } from '../support/cli-runner.js';
import { freshVhost } from '../support/fresh-services.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { natsAdmin, PrivateNatsServer } from '../support/nats-harness.js';
import { services } from '../support/services.js';
import { freshSqliteFile } from '../support/sqlite-file.js';

/**
 * The README's `npm start` commands: on no server at all (PGlite, a SQLite file), and on fresh servers (a
 * vhost with nothing declared, a NATS server without a stream, a MariaDB database with no tables). Each must
 * tell the whole story, exit 0 promptly and leave nothing behind.
 */
async function runDemo(args: readonly string[]) {
  const demo = startScript('examples/demo.ts', args, cliEnv());
  await demo.waitForOutput(({ stdout }) => /\[cleanup \] (dropped|kept) (schema|tables)/.test(stdout), 'the last line of the demo', 120_000);
  const lastLineAt = performance.now();
  const exit = await demo.waitForExit(60_000);
  return { ...exit, exitAfterLastLineMs: performance.now() - lastLineAt };
}

/** The story: per committed order, "committed" before the broker or consumer got its event; a rollback; one copy skipped. */
function expectStory(stdout: string): string {
  const lines = stdout.split('\n');
  const committed = [...stdout.matchAll(/order (\d) committed with event (\S+)/g)].map((match) => ({ order: match[1], id: match[2] as string }));
  expect(committed.map((c) => c.order)).toEqual(['1', '3', '4', '5']);
  for (const { id } of committed) {
    const committedAt = lines.findIndex((line) => line.includes('committed with event') && line.includes(id));
    const receivedAt = lines.findIndex((line) => line.includes('received') && line.includes(id));
    expect(receivedAt, `event ${id} was received`).toBeGreaterThan(-1);
    expect(committedAt, `"committed" printed before "received" for ${id}`).toBeLessThan(receivedAt);
  }
  expect(stdout).toContain('order 2 rolled back');
  expect(stdout).toContain('shipping applied 4 orders once each');
  expect(stdout).toContain('4 committed, 4 published, 1 rolled back');
  return /(?:schema|tables) (outboxer_demo_\w+)/.exec(stdout)?.[1] ?? '';
}

/** The in-memory destination's part of the story: a retried publish and a skipped duplicate. */
function expectMemoryDestination(stdout: string): void {
  expect(stdout).toMatch(/publish of \S+ failed .*retry in \d+ ms/);
  expect(stdout).toMatch(/\(attempt 2\)/);
  expect(stdout).toContain('skipped a duplicate delivery');
}

function sqliteTables(path: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY name`).all() as { name: string }[]).map(
      (row) => row.name,
    );
  } finally {
    db.close();
  }
}

async function schemaExists(schema: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: services.postgresUrl });
  await client.connect();
  try {
    return (await client.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema])).rowCount === 1;
  } finally {
    await client.end();
  }
}

describe('the demo (npm start)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('with no server: a rollback, a retried publish, a skipped duplicate and every committed event delivered', async () => {
    const { code, stdout, stderr, exitAfterLastLineMs } = await runDemo([]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expectStory(stdout);
    expectMemoryDestination(stdout);
    expect(exitAfterLastLineMs).toBeLessThan(PROMPT_EXIT_MS);
  });

  it('on a new SQLite file (--database sqlite:<file>): the whole story, then the file it created is gone', async () => {
    const file = freshSqliteFile('demo');
    cleanups.push(() => file.cleanup());
    const { code, stdout, stderr, exitAfterLastLineMs } = await runDemo(['--database', `sqlite:${file.path}`]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain(`database: SQLite ${file.path} (embedded, a new file)`);
    expectStory(stdout);
    expectMemoryDestination(stdout);
    expect(stdout).toContain(`and removed ${file.path}, which this run created`);
    expect(exitAfterLastLineMs).toBeLessThan(PROMPT_EXIT_MS);
    expect(readdirSync(dirname(file.path))).toEqual([]);
  });

  it('in an existing SQLite file (--database-url sqlite:<file>): --keep keeps its tables; without it a run drops only its own', async () => {
    const file = freshSqliteFile('demo');
    cleanups.push(() => file.cleanup());
    file.connect().exec('CREATE TABLE accounts (id INTEGER PRIMARY KEY)');
    const kept = await runDemo(['--database-url', `sqlite:${file.path}`, '--keep']);
    expect(kept.code).toBe(0);
    const keptRun = expectStory(kept.stdout);
    expect(kept.stdout).toContain(`kept tables ${keptRun}* in ${file.path} (--keep)`);
    const afterKeep = sqliteTables(file.path);
    expect(afterKeep).toEqual(
      expect.arrayContaining(['accounts', 'outboxer_migrations', keptRun, `${keptRun}_inbox`, `${keptRun}_orders`, `${keptRun}_shipments`]),
    );

    const dropped = await runDemo(['--database-url', `sqlite:${file.path}`]);
    expect({ code: dropped.code, stderr: dropped.stderr }).toEqual({ code: 0, stderr: '' });
    const droppedRun = expectStory(dropped.stdout);
    expect(droppedRun).not.toBe(keptRun);
    expect(dropped.stdout).toContain(`database: SQLite ${file.path} (embedded, an existing file)`);
    expect(dropped.stdout).toContain(`dropped tables ${droppedRun}* from ${file.path}`);
    expect(sqliteTables(file.path)).toEqual(afterKeep);
    expect(existsSync(file.path)).toBe(true);
  });

  it('on a MariaDB database with no tables and a fresh RabbitMQ vhost: the whole story, and nothing left in either', async () => {
    const mysql = await freshMysqlDatabase('demo');
    cleanups.push(() => mysql.cleanup());
    const vhost = await freshVhost();
    cleanups.push(() => vhost.delete());
    const { code, stdout, stderr, exitAfterLastLineMs } = await runDemo(['--database', mysql.url, '--broker', 'rabbitmq', '--broker-url', vhost.url]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/database: (MariaDB|MySQL) \d+\.\d+/);
    const run = expectStory(stdout);
    expect(stdout).toMatch(/received orders\.created \S+ from queue outboxer-demo-\w+-shipping/);
    expect(stdout).toContain('skipped a duplicate delivery');
    expect(stdout).toContain(`dropped tables ${run}* from database ${mysql.name}`);
    expect(exitAfterLastLineMs).toBeLessThan(PROMPT_EXIT_MS);
    expect(await vhost.declared()).toEqual({ queues: [], exchanges: [] });
    expect(await mysql.sql('SELECT table_name FROM information_schema.tables WHERE table_schema = ?', [mysql.name])).toEqual([]);
  });

  it('on a fresh RabbitMQ vhost: declares its queue before producing, consumes from it, and removes all it made', async () => {
    const vhost = await freshVhost();
    cleanups.push(() => vhost.delete());
    const { code, stdout, stderr, exitAfterLastLineMs } = await runDemo([
      '--database-url',
      services.postgresUrl,
      '--broker',
      'rabbitmq',
      '--broker-url',
      vhost.url,
    ]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const schema = expectStory(stdout);
    expect(stdout.indexOf('declared exchange')).toBeLessThan(stdout.indexOf('committed with event'));
    expect(stdout).toMatch(/received orders\.created \S+ from queue outboxer-demo-\w+-shipping/);
    expect(stdout).toContain('skipped a duplicate delivery');
    expect(exitAfterLastLineMs).toBeLessThan(PROMPT_EXIT_MS);
    expect(await vhost.declared()).toEqual({ queues: [], exchanges: [] });
    expect(await schemaExists(schema)).toBe(false);
  });

  it('on a NATS server without a stream: creates one with 1 replica before producing, consumes from it, and removes all it made', async () => {
    const nats = await PrivateNatsServer.create();
    cleanups.push(() => nats.destroy());
    await nats.start();
    const { code, stdout, stderr, exitAfterLastLineMs } = await runDemo(['--database-url', services.postgresUrl, '--broker', 'nats', '--broker-url', nats.url]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const schema = expectStory(stdout);
    expect(stdout.indexOf('created stream')).toBeLessThan(stdout.indexOf('committed with event'));
    expect(stdout).toMatch(/received orders\.created \S+ from stream OUTBOXER_DEMO_\w+/);
    expect(stdout).toContain('JetStream recognised the copy by its Nats-Msg-Id');
    expect(exitAfterLastLineMs).toBeLessThan(PROMPT_EXIT_MS);
    const admin = await natsAdmin(nats.adminOptions());
    cleanups.push(() => admin.close());
    expect(await admin.jsm.streams.names().next()).toEqual([]);
    expect(await schemaExists(schema)).toBe(false);
  });

  it('--keep leaves the schema and the stream for a look afterwards', async () => {
    const nats = await PrivateNatsServer.create();
    cleanups.push(() => nats.destroy());
    await nats.start();
    const { code, stdout } = await runDemo(['--database-url', services.postgresUrl, '--broker', 'nats', '--broker-url', nats.url, '--keep']);
    expect(code).toBe(0);
    const schema = expectStory(stdout);
    cleanups.push(async () => {
      const client = new pg.Client({ connectionString: services.postgresUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    });
    expect(await schemaExists(schema)).toBe(true);
    const admin = await natsAdmin(nats.adminOptions());
    cleanups.push(() => admin.close());
    expect(await admin.jsm.streams.names().next()).toEqual([expect.stringMatching(/^OUTBOXER_DEMO_/)]);
  });
});
