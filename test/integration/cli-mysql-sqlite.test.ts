import { afterEach, describe, expect, it } from 'vitest';
import { type CliProcess, cliEnv, runCli, startCli } from '../support/cli-runner.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { applyMysqlScript } from '../support/mysql-script.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import { mysqlMigrations } from '../../src/stores/mysql/migrations.js';
import { sqliteMigrations } from '../../src/stores/sqlite/migrations.js';

/** One database under the CLI: its URL, plain SQL on it, and the quoted key column of its dialect. */
interface CliDatabase {
  readonly url: string;
  readonly key: string;
  sql(text: string): Promise<readonly Record<string, unknown>[]>;
  /** Applies a whole script of several statements, as a DBA's client would. */
  applyScript(script: string): Promise<void>;
  cleanup(): Promise<void>;
}

async function mariadb(): Promise<CliDatabase> {
  const fresh = await freshMysqlDatabase('cli');
  return {
    url: fresh.url,
    key: '`key`',
    sql: (text) => fresh.sql(text),
    applyScript: (script) => applyMysqlScript(fresh.url, script),
    cleanup: fresh.cleanup,
  };
}

async function sqlite(): Promise<CliDatabase> {
  const file = freshSqliteFile('cli');
  const handle = file.connect();
  return {
    url: `sqlite:${file.path}`,
    key: '"key"',
    sql: async (text) =>
      text.trimStart().toUpperCase().startsWith('SELECT') ? (handle.prepare(text).all() as Record<string, unknown>[]) : (handle.exec(text), []),
    async applyScript(script) {
      handle.exec(script);
    },
    cleanup: file.cleanup,
  };
}

describe.each([
  ['MariaDB', mariadb, 'mysql'],
  ['SQLite', sqlite, 'sqlite'],
])('outboxer CLI on %s', (_name, open, dialect) => {
  let database: CliDatabase | undefined;
  const running: CliProcess[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((cli) => (cli.running ? cli.stop('SIGKILL') : cli.exited)));
    await database?.cleanup();
    database = undefined;
  });

  async function setup() {
    database = await open();
    return { db: database, env: cliEnv({ OUTBOXER_DATABASE_URL: database.url }) };
  }

  it("sql prints the dialect's DDL, which applies twice and leaves a table migrate calls up to date", async () => {
    const { db, env } = await setup();
    const printed = await runCli(['sql'], env);
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toContain(dialect === 'mysql' ? 'CREATE TABLE IF NOT EXISTS `outbox`' : 'CREATE TABLE IF NOT EXISTS "outbox"');
    await db.applyScript(printed.stdout);
    await db.applyScript(printed.stdout);
    const migrate = await runCli(['migrate'], env);
    expect(migrate.code, migrate.stderr).toBe(0);
    const latest = Math.max(...(dialect === 'mysql' ? mysqlMigrations : sqliteMigrations).map((m) => m.version));
    expect(migrate.stdout).toContain(`is up to date (schema version ${latest})`);
  });

  it('migrate creates the table once; status, dead list, dead retry and topics work on it', async () => {
    const { db, env } = await setup();
    const first = await runCli(['migrate', '--partitions', '8'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('applied migration 1 to');
    const second = await runCli(['migrate'], env);
    expect(second.stdout).toContain('is up to date');

    await db.sql(
      `INSERT INTO outbox (topic, type, payload, ${db.key}) VALUES ('orders.created', 'order.created', '{"id": 1}', 'order-1'), ('orders.created', 'order.created', '{"id": 2}', NULL)`,
    );
    const status = await runCli(['status', '--json'], env);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ pending: 2, scheduled: 0, dead: 0, engine: { partitionCount: 8, unownedPartitions: 8 } });
    const text = await runCli(['status'], env);
    expect(text.stdout).toContain('engine v2: 8 partitions');

    await db.sql(`UPDATE outbox SET state = 'dead', dead_at = created_at, last_error = 'refused by the broker' WHERE ${db.key} = 'order-1'`);
    const dead = await runCli(['dead', 'list', '--json'], env);
    expect(dead.code, dead.stderr).toBe(0);
    const listed = JSON.parse(dead.stdout) as { reason: string; key: string }[];
    expect(listed).toMatchObject([{ key: 'order-1', reason: 'refused by the broker' }]);
    const retry = await runCli(['dead', 'retry', '--all'], env);
    expect(retry.code, retry.stderr).toBe(0);
    expect(JSON.parse((await runCli(['status', '--json'], env)).stdout)).toMatchObject({ pending: 2, dead: 0 });

    const pause = await runCli(['topics', 'pause', 'orders.created', '--reason', 'consumer down'], env);
    expect(pause.code, pause.stderr).toBe(0);
    const topics = await runCli(['topics', 'list', '--json'], env);
    expect(JSON.parse(topics.stdout)).toMatchObject([{ topic: 'orders.created', reason: 'consumer down' }]);
    expect((await runCli(['topics', 'resume', 'orders.created'], env)).code).toBe(0);
  });

  it('relay --migrate publishes plain-SQL rows and stops on SIGTERM with exit 0; --cancel-resize is refused', async () => {
    const { db, env } = await setup();
    const refused = await runCli(['migrate', '--cancel-resize'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--cancel-resize and --resize-timeout-ms are for tables that resize live (PostgreSQL's)");
    const relay = startCli(['relay', '--publisher', 'console', '--migrate', '--poll-interval-ms', '50', '--max-poll-interval-ms', '100'], env);
    running.push(relay);
    await relay.waitForOutput((out) => out.stderr.includes('outboxer relay starting'), 'the relay to start');
    await db.sql(`INSERT INTO outbox (topic, type, payload, ${db.key}) VALUES ('orders.created', 'order.created', '{"id": 7}', 'order-7')`);
    const [row] = await db.sql('SELECT id FROM outbox');
    const id = String(row?.id);
    await relay.waitForOutput((out) => out.stdout.includes(`id=${id}`), 'the console line of the plain-SQL row');
    relay.child.kill('SIGTERM');
    const exit = await relay.exited;
    expect(exit.code, exit.stderr).toBe(0);
    expect(await db.sql('SELECT id FROM outbox')).toEqual([]);
    const startup = JSON.parse(exit.stderr.split('\n').find((line) => line.includes('outboxer relay starting')) ?? '{}') as Record<string, unknown>;
    expect(startup).toMatchObject({ dialect, publisher: 'console', table: 'outbox' });
    // Where the table is, as this database has it: its database (MariaDB) or its file (SQLite), no PostgreSQL schema.
    expect(startup).not.toHaveProperty('schema');
    expect(startup).toMatchObject(dialect === 'mysql' ? { databaseName: new URL(db.url).pathname.slice(1) } : { file: db.url.slice('sqlite:'.length) });
  });
});

describe('outboxer CLI: database URLs', () => {
  it('refuses a scheme it does not speak, naming the ones it does', async () => {
    const result = await runCli(['status'], cliEnv({ OUTBOXER_DATABASE_URL: 'mongodb://127.0.0.1/test' }));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('mysql://');
    // As the docs write it: a SQLite URL names a file, it has no host.
    expect(result.stderr).toContain('or sqlite:<file>;');
    expect(result.stderr).not.toContain('sqlite://');
  });

  it("relay exits 2 with OUTBOXER_WRONG_PROTOCOL for a mysql:// URL at PostgreSQL's port (a server that accepts and stays silent)", async () => {
    const result = await runCli(['relay', '--publisher', 'console'], cliEnv({ OUTBOXER_DATABASE_URL: 'mysql://root@127.0.0.1:5432/test' }), 45_000);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('OUTBOXER_WRONG_PROTOCOL');
  }, 60_000);

  it('explains a MariaDB URL that cannot connect in MariaDB terms, with the stable code and no password', async () => {
    const result = await runCli(['status'], cliEnv({ OUTBOXER_DATABASE_URL: 'mysql://app:s3cret@127.0.0.1:1/test' }));
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('OUTBOXER_DATABASE_UNAVAILABLE: cannot reach MariaDB/MySQL');
    expect(result.stderr).not.toContain('PostgreSQL');
    expect(result.stderr).not.toContain('s3cret');
  });

  it('says which file it could not open for a SQLite URL in a missing directory', async () => {
    const result = await runCli(['status'], cliEnv({ OUTBOXER_DATABASE_URL: 'sqlite:/nonexistent-dir-outboxer/x.db' }));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('/nonexistent-dir-outboxer/x.db');
  });
});
