import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, startScript } from '../support/cli-runner.js';
import { freshVhost } from '../support/fresh-services.js';
import { closedPort } from '../support/rabbitmq-harness.js';
import { services, uniqueName } from '../support/services.js';

const run = promisify(execFile);

/**
 * The demo (`npm start`) when something is wrong: a mistake in its command line is one line and exit 2 before
 * anything connects; a server that is down or refuses it is one line with its code and URL, exit 1, promptly;
 * and a run that fails after it made its schema removes it, and whatever it declared in the broker.
 */
async function runDemo(args: readonly string[]) {
  const started = performance.now();
  const result = await startScript('examples/demo.ts', args, cliEnv()).waitForExit(60_000);
  return { ...result, ms: performance.now() - started };
}

/**
 * Well above a failing run here (about 2 s on a loaded machine, most of it starting Node and tsx), well below
 * what the demo used to take to fail: 11-16 s, waiting on PGlite or on an idle pool it never closed.
 */
const FAST_MS = 8000;

async function schemaExists(schema: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: services.postgresUrl });
  await client.connect();
  try {
    return (await client.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema])).rowCount === 1;
  } finally {
    await client.end();
  }
}

/** One line on stderr, without a stack trace. */
function expectOneLine(stderr: string): void {
  expect(stderr.trimEnd().split('\n'), stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at /m);
}

describe('the demo (npm start) when something is wrong', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('refuses --broker kafka in one line, exit 2, before it connects to anything', async () => {
    // The database is a closed port: a demo that connected before checking its flags would fail on it instead.
    const { code, stdout, stderr, ms } = await runDemo(['--database-url', `postgres://postgres@127.0.0.1:${await closedPort()}/test`, '--broker', 'kafka']);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toMatch(/^demo: --broker must be memory, rabbitmq or nats; got "kafka" \('npm start -- --help' lists the options\)\n$/);
    expect(ms).toBeLessThan(FAST_MS);
  });

  it.each([
    [['--brokr', 'nats'], /^demo: unknown option '--brokr'; did you mean --broker\? /],
    [
      ['--database', 'mongodb://127.0.0.1/test'],
      /^demo: --database takes postgres:\/\/…, postgresql:\/\/…, mysql:\/\/…, mariadb:\/\/… or sqlite:<file>; got mongodb:/,
    ],
    [['--broker', 'nats', '--broker-url', 'amqp://127.0.0.1:5672'], /^demo: --broker-url takes nats:\/\/…, tls:\/\/…, ws:\/\/… or wss:\/\/…; got amqp:/],
    [['--orders', 'many'], /^demo: --orders must be a whole number from 1 to 1000; got "many"/],
    [['--keep=yes'], /^demo: --keep takes no value/],
  ])('refuses %j in one line with exit 2, no stack trace', async (args, message) => {
    const { code, stdout, stderr } = await runDemo(args);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toMatch(message);
    expectOneLine(stderr);
  });

  it('--help prints its usage, exit 0', async () => {
    const { code, stdout, stderr } = await runDemo(['--help']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^Usage: npm start -- \[--database <url>\] \[--broker memory\|rabbitmq\|nats\]/);
  });

  it('a NATS server that is down: one line with the code and the URL, exit 1, promptly, and nothing made in the database', async () => {
    const port = await closedPort();
    const { code, stdout, stderr, ms } = await runDemo([
      '--database-url',
      services.postgresUrl,
      '--broker',
      'nats',
      '--broker-url',
      `nats://127.0.0.1:${port}`,
    ]);
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' }); // no setup line: the broker is checked before the database is touched
    expect(stderr).toMatch(new RegExp(`^demo failed: OUTBOXER_BROKER_UNAVAILABLE: cannot connect to NATS at nats://127\\.0\\.0\\.1:${port} \\(`));
    expectOneLine(stderr);
    expect(ms).toBeLessThan(FAST_MS);
  });

  it('a RabbitMQ vhost that does not exist: worded as the relay words it (OUTBOXER_VHOST_REFUSED, the vhost, the fix), exit 1', async () => {
    const vhost = uniqueName('novh');
    const url = `${services.amqpUrl.replace(/\/$/, '')}/${vhost}`;
    const { code, stdout, stderr, ms } = await runDemo(['--database-url', services.postgresUrl, '--broker', 'rabbitmq', '--broker-url', url]);
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toMatch(
      new RegExp(
        `^demo failed: OUTBOXER_VHOST_REFUSED: RabbitMQ at amqp://\\*\\*\\*:\\*\\*\\*@127\\.0\\.0\\.1:5672/${vhost} refused virtual host "${vhost}" .*rabbitmqctl add_vhost`,
      ),
    );
    expect(stderr).not.toContain('guest:guest');
    expectOneLine(stderr);
    expect(ms).toBeLessThan(FAST_MS);
  });

  it('a run that fails after it made its schema (its queue refused) drops that schema and deletes the exchange it declared', async () => {
    const vhost = await freshVhost();
    cleanups.push(() => vhost.delete());
    // guest may declare the demo's exchange (outboxer-demo-<run>) in this vhost, not its queue (outboxer-demo-<run>-shipping)
    await run('rabbitmqctl', ['set_permissions', '-p', vhost.name, 'guest', '^outboxer-demo-[0-9a-f]+$', '.*', '.*'], { timeout: 60_000 });
    const { code, stdout, stderr, ms } = await runDemo(['--database-url', services.postgresUrl, '--broker', 'rabbitmq', '--broker-url', vhost.url]);
    const schema = /schema (outboxer_demo_[0-9a-f]+)/.exec(stdout)?.[1];
    expect(schema, stdout).toBeDefined();
    cleanups.push(async () => {
      const client = new pg.Client({ connectionString: services.postgresUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => client.end());
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^demo failed: \w+: .*ACCESS_REFUSED/);
    expectOneLine(stderr);
    expect(stdout).toMatch(/\[cleanup \] deleted exchange outboxer-demo-[0-9a-f]+\n/);
    expect(stdout).toContain(`[cleanup ] dropped schema ${schema}\n`);
    expect(await schemaExists(String(schema))).toBe(false);
    expect(await vhost.declared()).toEqual({ queues: [], exchanges: [] });
    expect(ms).toBeLessThan(FAST_MS * 2);
  });
});
