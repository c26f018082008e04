import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import amqp from 'amqplib';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import pg from 'pg';
import { redactUrl } from '../../src/core/redact.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, type CliResult, cliEnv, runCli, startCli } from '../support/cli-runner.js';
import { services, uniqueName } from '../support/services.js';

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
/** Nothing listens on port 1: every connection is refused at once. */
const unreachable = (password: string) => `postgres://postgres:${password}@127.0.0.1:1/test`;

let pool: pg.Pool;
const schemas: string[] = [];
const running: CliProcess[] = [];

beforeAll(() => {
  pool = new pg.Pool({ connectionString: services.postgresUrl, max: 4 });
  pool.on('error', () => undefined);
});
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

function start(args: readonly string[], env: NodeJS.ProcessEnv): CliProcess {
  const cli = startCli(args, env);
  running.push(cli);
  return cli;
}

async function migrated(extra: Record<string, string> = {}) {
  const setup = freshSchema(extra);
  const result = await runCli(['migrate'], setup.env);
  expect(result.code, result.stderr).toBe(0);
  return setup;
}

async function insert(table: string, rows: number, topic = 'orders.created'): Promise<string[]> {
  const result = await pool.query(
    `INSERT INTO ${table} (topic, key, type, payload)
     SELECT $1, 'k' || (n % 3), 'order.created', jsonb_build_object('n', n) FROM generate_series(1, $2) AS n
     RETURNING id::text AS id`,
    [topic, rows],
  );
  return result.rows.map((row: { id: string }) => row.id);
}

async function waitUntil(condition: () => Promise<boolean>, what: string, cli?: CliProcess, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cli === undefined ? '' : `\nCLI stderr:\n${cli.stderr}`}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const countRows = async (table: string, where = 'true') => Number((await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`)).rows[0].n);

function expectUsageError(result: CliResult, message: string | RegExp): void {
  expect(result.code, `stderr: ${result.stderr}`).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(message);
  expect(result.stderr).toContain('Usage: outboxer');
}

describe('outboxer CLI: usage', () => {
  it('prints the version and the help, with exit 0', async () => {
    const env = cliEnv();
    const [versionResult, help, relayHelp, deadHelp] = await Promise.all([
      runCli(['--version'], env),
      runCli(['help'], env),
      runCli(['relay', '--help'], env),
      runCli(['help', 'dead', 'retry'], env),
    ]);
    expect(versionResult).toMatchObject({ code: 0, stdout: `${version}\n` });
    expect(help.code).toBe(0);
    for (const command of ['migrate', 'sql', 'relay', 'status', 'dead list', 'dead retry', 'dead purge']) expect(help.stdout).toContain(command);
    expect(relayHelp.code).toBe(0);
    expect(relayHelp.stdout).toContain('--publisher');
    expect(relayHelp.stdout).toContain('OUTBOXER_BROKER_URL');
    expect(deadHelp).toMatchObject({ code: 0, stderr: '' });
    expect(deadHelp.stdout).toContain('Usage: outboxer dead retry');
  });

  // The database URL points nowhere: exit 2 (not 1) proves the input is refused before any connection.
  const nowhere = { OUTBOXER_DATABASE_URL: unreachable('nowhere-password') };
  const uuid = randomUUID();
  it.concurrent.each([
    [[], {}, /no command given/],
    [['frobnicate'], {}, /unknown command 'frobnicate'/],
    [['dead'], {}, /needs a subcommand/],
    [['dead', 'resurrect'], {}, /unknown command 'dead resurrect'/],
    [['status', '--bogus'], {}, /Unknown option '--bogus'/],
    [['status', '--limit', '3'], {}, /--limit does not apply to 'status'/],
    [['status', 'extra'], {}, /unexpected argument 'extra'/],
    [['dead', 'list', '--limit', 'abc'], {}, /--limit must be a whole number/],
    [['dead', 'list', '--limit', '0'], {}, /--limit must be a whole number from 1/],
    [['relay', '--batch-size', '1.5'], {}, /--batch-size must be a whole number/],
    [['relay', '--lease-ms', '-5'], {}, /lease-ms/],
    [['relay'], { OUTBOXER_BATCH_SIZE: 'many' }, /OUTBOXER_BATCH_SIZE must be a whole number/],
    [['relay', '--lease-ms', '5000'], {}, /relay option publishTimeoutMs \(10000\) must be .*leaseMs \(5000\)/],
    [['relay', '--publisher', 'kafka'], {}, /--publisher must be one of console, rabbitmq, nats/],
    [['relay', '--publisher', 'rabbitmq'], {}, /needs --broker-url or OUTBOXER_BROKER_URL/],
    [['relay', '--publisher', 'nats', '--broker-url', 'http://127.0.0.1:4222'], {}, /must start with nats:\/\//],
    [['relay', '--exchange', 'x'], {}, /--exchange applies only to rabbitmq/],
    [['relay', '--log-level', 'loud'], {}, /--log-level must be one of debug, info, warn, error/],
    [['relay', '--lanes', '17'], {}, /--lanes must be a whole number from 1 to 16; got "17" \(set by --lanes or OUTBOXER_LANES\)/],
    [['relay'], { OUTBOXER_RETRY_JITTER: '2' }, /OUTBOXER_RETRY_JITTER must be a number from 0 to 1; got "2" \(set by --retry-jitter or OUTBOXER_RETRY_JITTER\)/],
    [['relay', '--prepared-statements', 'off'], {}, /--prepared-statements must be true or false; got "off" \(set by --prepared-statements or OUTBOXER_PREPARED_STATEMENTS\)/],
    [['relay', '--error-backoff-ms', '900'], { OUTBOXER_MAX_ERROR_BACKOFF_MS: '800' }, /maxErrorBackoffMs must be >= errorBackoffMs \(set by --error-backoff-ms or OUTBOXER_ERROR_BACKOFF_MS; --max-error-backoff-ms or OUTBOXER_MAX_ERROR_BACKOFF_MS\)/],
    [['status', '--lanes', '2'], {}, /--lanes does not apply to 'status'/],
    [['dead', 'retry'], {}, /give the ids of the dead messages, or --all/],
    [['dead', 'retry', '--all', uuid], {}, /either message ids or --all, not both/],
    [['dead', 'purge', uuid, 'not-a-uuid'], {}, /not a message id \(UUID\): "not-a-uuid"/],
    [['status', '--schema', 'x"; DROP TABLE outbox; --'], {}, /schema must match/],
    [['status', '--database-url', 'mysql://root@127.0.0.1/test'], {}, /--database-url must start with postgres:\/\//],
    [['status'], { OUTBOXER_DATABASE_URL: '' }, /--database-url or OUTBOXER_DATABASE_URL is required/],
  ] as const)('refuses %j (env %j) with exit 2 and the usage', async (args, env, message) => {
    expectUsageError(await runCli(args, cliEnv({ ...nowhere, ...env })), message);
  });
});

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
    expect(tables.rows.map((row: { table_name: string }) => row.table_name)).toEqual(['events_outbox', 'events_outbox_idempotency', 'outboxer_migrations']);
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
    expect(versions.rows).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }, { version: 4 }, { version: 5 }]);
  });
});

describe('outboxer CLI: status', () => {
  it('counts rows inserted with plain SQL in every state, as JSON and as a table', async () => {
    const { env, table } = await migrated();
    await pool.query(`INSERT INTO ${table} (topic, type, payload, created_at) VALUES ('t', 'x', '{}', now() - interval '2 minutes')`);
    await pool.query(`INSERT INTO ${table} (topic, type, payload) VALUES ('t', 'x', '{}'), ('t', 'x', '{}')`);
    await pool.query(`INSERT INTO ${table} (topic, type, payload, available_at) VALUES ('t', 'x', '{}', now() + interval '1 hour')`);
    await pool.query(`INSERT INTO ${table} (topic, type, payload, lease_owner, lease_token, lease_until)
      VALUES ('t', 'x', '{}', 'someone', gen_random_uuid(), now() + interval '1 minute')`);
    await pool.query(`INSERT INTO ${table} (topic, type, payload, state, published_at) VALUES ('t', 'x', '{}', 'published', now())`);
    await pool.query(`INSERT INTO ${table} (topic, type, payload, state, dead_at, last_error)
      VALUES ('t', 'x', '{}', 'dead', now(), 'a'), ('t', 'x', '{}', 'dead', now(), 'b')`);
    const json = await runCli(['status', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    const stats = JSON.parse(json.stdout) as Record<string, number>;
    expect(stats).toMatchObject({ pending: 3, scheduled: 1, inFlight: 1, published: 1, dead: 2 });
    expect(stats.oldestPendingAgeSeconds).toBeGreaterThanOrEqual(120);
    expect(stats.oldestPendingAgeSeconds).toBeLessThan(600);
    const text = await runCli(['status'], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/pending\s+3/);
    expect(text.stdout).toMatch(/in flight\s+1/);
    expect(text.stdout).toMatch(/dead\s+2/);
    expect(text.stdout).toMatch(/oldest pending message: 2m \d+s old/);
  });
});

describe('outboxer CLI: dead messages', () => {
  it('lists, retries and purges dead messages, with an audit line per mutation', async () => {
    const { env, table, schema } = await migrated();
    const ids = await insert(table, 4);
    const [a, b, c] = ids as [string, string, string, string];
    await pool.query(`UPDATE ${table} SET state = 'dead', dead_at = now(), attempts = 10, last_error = $2 WHERE id = ANY($1::uuid[])`, [
      [a, b, c],
      'OUTBOXER_UNROUTABLE: no queue bound\nfor this topic \u001b[31m',
    ]);

    const listed = await runCli(['dead', 'list', '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    const dead = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
    expect(dead.map((m) => m.id).sort()).toEqual([a, b, c].sort());
    expect(dead[0]).toMatchObject({ topic: 'orders.created', type: 'order.created', attempts: 10, reason: 'OUTBOXER_UNROUTABLE: no queue bound\nfor this topic \u001b[31m' });
    expect(new Date(String(dead[0]?.deadAt)).getTime()).not.toBeNaN();

    const limited = await runCli(['dead', 'list', '--limit', '2'], env);
    expect(limited.code, limited.stderr).toBe(0);
    expect(limited.stdout).toMatch(/^id\s+topic\s+type\s+key\s+attempts\s+dead at\s+reason/);
    expect(limited.stdout).toContain('OUTBOXER_UNROUTABLE: no queue bound for this topic \\u001b[31m');
    expect(limited.stdout).not.toContain('\u001b');
    expect(limited.stdout).toContain('2 dead message(s); there may be more');

    const retried = await runCli(['dead', 'retry', a.toUpperCase(), b], env);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toBe('2 of 2 requested dead message(s) moved back to pending\n');
    const audit = JSON.parse(retried.stderr.trim()) as Record<string, unknown>;
    expect(audit).toMatchObject({ audit: true, action: 'dead.retry', user: userInfo().username, table: `${schema}.outbox`, changed: 2, requested: 2 });
    expect(audit.ids).toEqual([a, b]);
    const back = await pool.query(`SELECT state, attempts FROM ${table} WHERE id = ANY($1::uuid[])`, [[a, b]]);
    expect(back.rows).toEqual([{ state: 'pending', attempts: 0 }, { state: 'pending', attempts: 0 }]);

    const notDead = await runCli(['dead', 'purge', a], env);
    expect(notDead.code, notDead.stderr).toBe(0);
    expect(notDead.stdout).toBe('0 of 1 requested dead message(s) deleted\n');
    expect(notDead.stderr).toContain('not dead messages');

    const purged = await runCli(['dead', 'purge', '--all'], env);
    expect(purged.code, purged.stderr).toBe(0);
    expect(purged.stdout).toBe('1 dead message(s) deleted\n');
    expect(JSON.parse(purged.stderr.trim())).toMatchObject({ audit: true, action: 'dead.purge', requested: 'all', changed: 1 });
    expect(await countRows(table)).toBe(3);
    expect(await countRows(table, `state = 'dead'`)).toBe(0);

    const empty = await runCli(['dead', 'list'], env);
    expect(empty.stdout).toContain('no dead messages');
  });
});

describe('outboxer CLI: dead list with a reason the relay wrote', () => {
  it("shows the cause of a message the broker refused for good, not the repeated id that used to push it out of view", async () => {
    const prefix = uniqueName('p');
    const stream = uniqueName('s');
    const { env, table } = await migrated({ OUTBOXER_SUBJECT_PREFIX: prefix, OUTBOXER_BROKER_URL: services.natsUrl });
    const nc = await natsConnect({ servers: services.natsUrl });
    const jsm = await jetstreamManager(nc);
    try {
      // The stream takes at most 256 bytes a message: a 1 KB payload is refused for good, and parked dead at once.
      await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`], max_msg_size: 256 });
      const inserted = await pool.query(`INSERT INTO ${table} (topic, type, payload) VALUES ('orders.created', 'order.created', jsonb_build_object('pad', repeat('x', 1024))) RETURNING id::text AS id`);
      const id = (inserted.rows[0] as { id: string }).id;
      const relay = start(['relay', '--publisher', 'nats', '--poll-interval-ms', '50'], env);
      await waitUntil(async () => (await countRows(table, `state = 'dead'`)) === 1, 'the message to be parked dead', relay);
      expect((await relay.stop('SIGTERM')).code).toBe(0);

      const json = await runCli(['dead', 'list', '--json'], env);
      expect(json.code, json.stderr).toBe(0);
      const [dead] = JSON.parse(json.stdout) as Array<{ id: string; reason: string }>;
      expect(dead?.id).toBe(id);
      // As stored: the publisher names the message first, then the cause.
      expect(dead?.reason).toMatch(new RegExp(`^OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER: message ${id} is larger than the max_msg_size of the stream`));

      const text = await runCli(['dead', 'list'], env);
      expect(text.code, text.stderr).toBe(0);
      const [header, row] = text.stdout.split('\n');
      expect(header).toMatch(/^id\s+topic\s+type\s+key\s+attempts\s+dead at\s+reason$/);
      expect(row).toMatch(new RegExp(`^${id}\\s+orders\\.created\\s+order\\.created\\s+-\\s+1\\s+\\S+\\s+OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER: the message is larger than the max_msg_size of the stream capturing "${prefix}\\.orders\\.created"`));
      expect(row).toContain("raise the stream's max_msg_size or lower maxPayloadBytes at enqueue");
      expect(row?.split(id)).toHaveLength(2);
    } finally {
      await jsm.streams.delete(stream).catch(() => undefined);
      await nc.close();
    }
  });
});

describe('outboxer CLI: relay', () => {
  it('publishes pending rows with --publisher console, survives dropped connections, and stops on SIGTERM with exit 0', async () => {
    const appName = uniqueName('cli_relay');
    // Options from the environment (migrations at start among them) and from flags reach the relay and its store.
    const { env, table, schema } = freshSchema({ OUTBOXER_MIGRATE: 'true', OUTBOXER_LANES: '2', OUTBOXER_PREPARED_STATEMENTS: 'false', OUTBOXER_RETRY_JITTER: '0.2' });
    const tuning = ['--owner', 'cli-test-relay', '--idempotency-window-ms', '3600000', '--max-in-flight', '32', '--housekeeping-batch-size', '100'];
    // application_name in the URL lets the test find this relay's connections.
    const relay = start(['relay', '--publisher', 'console', '--poll-interval-ms', '50', ...tuning, '--database-url', `${services.postgresUrl}?application_name=${appName}`], env);
    await relay.waitForOutput((out) => out.stderr.includes('"relay started"'), 'the relay to start');
    const first = await insert(table, 25);
    await waitUntil(async () => (await countRows(table)) === 0, 'the first rows to be published', relay);

    // Every connection of the relay dies (idle ones included): the pool reports it, the relay carries on.
    await pool.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [appName]);
    const second = await insert(table, 5);
    await waitUntil(async () => (await countRows(table)) === 0, 'the rows inserted after the connections died', relay);
    await relay.waitForOutput((out) => [...first, ...second].every((id) => out.stdout.includes(`id=${id}`)), 'a console line per message');
    expect(relay.running).toBe(true);

    const result = await relay.stop('SIGTERM');
    expect(result.code, result.stderr).toBe(0);
    const logs = result.stderr.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const startup = logs.find((line) => line.msg === 'outboxer relay starting');
    expect(startup).toMatchObject({ publisher: 'console', schema, table: 'outbox', batchSize: 500, pollIntervalMs: 50, version });
    expect(startup).toMatchObject({ owner: 'cli-test-relay', lanes: 2, maxInFlight: 32, housekeepingBatchSize: 100, retry: { jitter: 0.2, maxAttempts: 10 } });
    expect(startup).toMatchObject({ preparedStatements: false, idempotencyWindowMs: 3_600_000, retainPublishedMs: 0 });
    expect(startup?.database).toBe(redactUrl(`${services.postgresUrl}?application_name=${appName}`));
    expect(logs.map((line) => line.msg)).toContain('relay stopped');
    expect(logs.at(-1)?.msg).toBe('outboxer relay exited');
    expect(result.stdout.split('\n').filter((line) => line.startsWith('[outboxer]'))).toHaveLength(30);
  });

  /** A relay whose claim query is stuck behind a table lock the test holds: its graceful stop has to wait. */
  async function blockedRelay() {
    const appName = uniqueName('cli_relay');
    const { env, table } = await migrated();
    const relay = start(['relay', '--poll-interval-ms', '50', '--database-url', `${services.postgresUrl}?application_name=${appName}`], env);
    await relay.waitForOutput((out) => out.stderr.includes('"relay started"'), 'the relay to start');
    const locker = await pool.connect();
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    await waitUntil(
      async () => (await pool.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, [appName])).rowCount === 1,
      'the relay to wait for the lock',
    );
    const unlock = async () => {
      await locker.query('ROLLBACK');
      locker.release();
    };
    return { relay, unlock };
  }

  it('a graceful stop waits for the round in progress to finish', async () => {
    const { relay, unlock } = await blockedRelay();
    try {
      relay.child.kill('SIGTERM');
      await relay.waitForOutput((out) => out.stderr.includes('stop requested'), 'the stop to begin');
      expect(relay.running).toBe(true);
      expect(relay.stderr).not.toContain('relay stopped');
    } finally {
      await unlock();
    }
    const result = await relay.waitForExit();
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('relay stopped');
  });

  it('a second signal forces exit 1 without waiting', async () => {
    const { relay, unlock } = await blockedRelay();
    try {
      relay.child.kill('SIGINT');
      await relay.waitForOutput((out) => out.stderr.includes('stop requested'), 'the stop to begin');
      relay.child.kill('SIGINT');
      const result = await relay.waitForExit(10_000);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain('second signal: forcing exit');
      expect(result.stderr).not.toContain('relay stopped');
    } finally {
      await unlock();
    }
  });
});

describe('outboxer CLI: secrets', () => {
  const canary = `CANARY${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const special = `${canary}%40%3Az`; // percent-encoded: the decoded password is `${canary}@:z`
  const leaks = (result: { stdout: string; stderr: string }) => `${result.stdout}\n${result.stderr}`.includes(canary);

  it.concurrent.each([
    [['status', '--database-url', unreachable(canary)]],
    [['status', '--json', `--database-url=${unreachable(special)}`]],
    [['migrate', '--database-url', unreachable(canary)]],
    [['dead', 'list', '--database-url', unreachable(canary)]],
    [['dead', 'retry', '--all', '--database-url', unreachable(canary)]],
    [['relay', '--migrate', '--database-url', unreachable(canary)]],
  ])('%j fails with exit 1, one line, the code and the redacted URL, never the password', async (args) => {
    const result = await runCli(args, cliEnv());
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toBe('');
    expect(leaks(result)).toBe(false);
    const errorLine = result.stderr.trim().split('\n').at(-1) ?? '';
    expect(errorLine).toMatch(/^outboxer [a-z ]+: ECONNREFUSED: .*\(database postgres:\/\/\*\*\*:\*\*\*@127\.0\.0\.1:1\/test\)/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('never prints the password from the environment, even through a long outage of the relay', async () => {
    const env = cliEnv({ OUTBOXER_DATABASE_URL: unreachable(special), OUTBOXER_LOG_LEVEL: 'debug' });
    const relay = start(['relay'], env);
    await relay.waitForOutput((out) => (out.stderr.match(/relay round failed/g) ?? []).length >= 2, 'two failed rounds');
    const result = await relay.stop('SIGTERM');
    expect(result.code, result.stderr).toBe(0);
    expect(leaks(result)).toBe(false);
    expect(result.stderr).toContain('postgres://***:***@127.0.0.1:1/test');
  });

  // Not concurrent: these create schemas and processes that the shared afterEach cleans up.
  it.each([
    ['rabbitmq', `amqp://guest:${canary}@127.0.0.1:1`],
    ['nats', `nats://outboxer:${canary}@127.0.0.1:1`],
    ['nats', `nats://${canary}@127.0.0.1:1`], // a NATS token rides in the user name
  ])('--publisher %s with an unreachable broker never prints its password', async (publisher, brokerUrl) => {
    const { env, table } = await migrated({ OUTBOXER_BROKER_URL: brokerUrl });
    await insert(table, 1);
    const relay = start(['relay', '--publisher', publisher, '--poll-interval-ms', '50', '--publish-timeout-ms', '2000', '--lease-ms', '5000'], env);
    // The message is attempted, fails, and goes back uncounted with the reason: the broker outage is survived.
    await waitUntil(async () => (await countRows(table, `attempts = 0 AND last_error LIKE '%OUTBOXER_BROKER_UNAVAILABLE%'`)) === 1, 'a failed publish attempt', relay);
    expect(relay.running).toBe(true);
    const result = await relay.stop('SIGTERM');
    expect(result.code, result.stderr).toBe(0);
    expect(leaks(result)).toBe(false);
    const lastError = (await pool.query(`SELECT last_error FROM ${table}`)).rows[0].last_error as string;
    expect(lastError).not.toContain(canary);
  });
});

describe('outboxer CLI: relay to real brokers', () => {
  it('--publisher rabbitmq publishes every pending row to the exchange with its id', async () => {
    const { env, table } = await migrated();
    const exchange = uniqueName('ex');
    const prefix = uniqueName('p');
    const connection = await amqp.connect(services.amqpUrl);
    try {
      const channel = await connection.createChannel();
      // Declared as the publisher declares it (durable topic), or the broker refuses its declaration.
      await channel.assertExchange(exchange, 'topic', { durable: true });
      const { queue } = await channel.assertQueue('', { exclusive: true });
      await channel.bindQueue(queue, exchange, `${prefix}.#`);
      const received: string[] = [];
      await channel.consume(queue, (message) => {
        if (message !== null) received.push(String(message.properties.messageId));
      }, { noAck: true });
      const ids = await insert(table, 10, `${prefix}.orders`);
      const relay = start(['relay', '--publisher', 'rabbitmq', '--broker-url', services.amqpUrl, '--exchange', exchange, '--poll-interval-ms', '50'], env);
      await waitUntil(async () => received.length >= ids.length && (await countRows(table)) === 0, 'every message at the queue', relay);
      expect([...received].sort()).toEqual([...ids].sort());
      const result = await relay.stop('SIGTERM');
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain('"exchange":"' + exchange + '"');
      expect(result.stderr).toContain('relay stopped');
      await channel.deleteExchange(exchange);
    } finally {
      await connection.close();
    }
  });

  it('--publisher nats publishes every pending row to JetStream under the subject prefix, with Nats-Msg-Id', async () => {
    const prefix = uniqueName('p');
    const stream = uniqueName('s');
    const { env, table } = await migrated({ OUTBOXER_SUBJECT_PREFIX: prefix });
    const nc = await natsConnect({ servers: services.natsUrl });
    const jsm = await jetstreamManager(nc);
    try {
      await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`] });
      const ids = await insert(table, 10, 'orders.created');
      // The broker URL from the environment, the prefix too; a list of servers is accepted.
      const relay = start(['relay', '--publisher', 'nats', '--broker-url', `${services.natsUrl},${services.natsUrl}`, '--poll-interval-ms', '50'], env);
      await waitUntil(async () => (await jsm.streams.info(stream)).state.messages >= ids.length, 'every message in the stream', relay);
      const stored: string[] = [];
      for (let seq = 1; seq <= ids.length; seq++) {
        const message = await jsm.streams.getMessage(stream, { seq });
        expect(message?.subject).toBe(`${prefix}.orders.created`);
        stored.push(message?.header.get('Nats-Msg-Id') ?? '');
      }
      expect([...stored].sort()).toEqual([...ids].sort());
      await waitUntil(async () => (await countRows(table)) === 0, 'the rows to be marked', relay);
      const result = await relay.stop('SIGTERM');
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain('relay stopped');
    } finally {
      await jsm.streams.delete(stream).catch(() => undefined);
      await nc.close();
    }
  });
});
