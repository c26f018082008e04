import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, afterEach, expect } from 'vitest';
import type { OutboxMessageInput } from '../../src/core/message.js';
import { Outbox } from '../../src/core/outbox.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { type CliProcess, type CliResult, cliEnv, runCli, startCli } from './cli-runner.js';
import { services, uniqueName } from './services.js';
import { waitFor } from './wait-for.js';

/** The package's version, as `outboxer --version` prints it. */
export const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Nothing listens on port 1: every connection is refused at once. */
export const unreachable = (password: string) => `postgres://postgres:${password}@127.0.0.1:1/test`;

/** `waitFor`, whose timeout error also carries the CLI's stderr, when one is given. */
export async function waitUntil(condition: () => Promise<boolean>, what: string, cli?: CliProcess, timeoutMs = 20_000): Promise<void> {
  try {
    await waitFor(condition, { timeoutMs, intervalMs: 50, what });
  } catch (error) {
    if (cli === undefined || !(error instanceof Error)) throw error;
    throw new Error(`${error.message}\nCLI stderr:\n${cli.stderr}`, { cause: error });
  }
}

/** A refusal of the command line: exit 2, nothing on stdout, the message and the usage on stderr. */
export function expectUsageError(result: CliResult, message: string | RegExp): void {
  expect(result.code, `stderr: ${result.stderr}`).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(message);
  expect(result.stderr).toContain('Usage: outboxer');
}

/**
 * Per-file fixtures for the CLI tests. Call once at the top of a test file: it registers the hooks that kill
 * the CLI processes a test started, drop the schemas it made, and end the pool.
 */
export function cliFixtures() {
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 4 });
  pool.on('error', () => undefined);
  const schemas: string[] = [];
  const running: CliProcess[] = [];

  afterEach(async () => {
    await Promise.all(running.splice(0).map((cli) => (cli.running ? cli.stop('SIGKILL') : cli.exited)));
    for (const schema of schemas.splice(0)) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });
  afterAll(async () => {
    await pool.end();
  });

  /** A fresh schema for one test (dropped afterwards) and the environment pointing the CLI at it. */
  function freshSchema(extra: Record<string, string> = {}) {
    const schema = uniqueName('cli');
    schemas.push(schema);
    const env = cliEnv({ OUTBOXER_DATABASE_URL: services.postgresUrl, OUTBOXER_SCHEMA: schema, ...extra });
    return { schema, env, table: `"${schema}".outbox` };
  }

  /** A CLI process, killed after the test if it still runs. */
  function start(args: readonly string[], env: NodeJS.ProcessEnv): CliProcess {
    const cli = startCli(args, env);
    running.push(cli);
    return cli;
  }

  /** A fresh schema that `outboxer migrate` has set up. */
  async function migrated(extra: Record<string, string> = {}) {
    const setup = freshSchema(extra);
    const result = await runCli(['migrate'], setup.env);
    expect(result.code, result.stderr).toBe(0);
    return setup;
  }

  /** Inserts `rows` messages with plain SQL, keys k0..k2; returns their ids. */
  async function insert(table: string, rows: number, topic = 'orders.created'): Promise<string[]> {
    const result = await pool.query(
      `INSERT INTO ${table} (topic, key, type, payload)
       SELECT $1, 'k' || (n % 3), 'order.created', jsonb_build_object('n', n) FROM generate_series(1, $2) AS n
       RETURNING id::text AS id`,
      [topic, rows],
    );
    return result.rows.map((row: { id: string }) => row.id);
  }

  /**
   * Enqueues `messages` through the store into `schema`'s outbox, in one transaction (type `order.created` and a
   * small payload unless given): how a producer writes a row with a `destination`. Returns their ids.
   */
  async function enqueue(schema: string, messages: readonly Partial<OutboxMessageInput>[]): Promise<readonly string[]> {
    const db = fromPgPool(pool);
    const outbox = new Outbox<SqlExecutor>(new PostgresOutboxStore(db, { schema }));
    const inputs = messages.map((message, n): OutboxMessageInput => ({ topic: 'orders.created', type: 'order.created', payload: { n }, ...message }));
    return outbox.transaction(db, (tx) => outbox.enqueueMany(tx, inputs));
  }

  const countRows = async (table: string, where = 'true') => Number((await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`)).rows[0].n);

  return { pool, freshSchema, start, migrated, insert, enqueue, countRows };
}
