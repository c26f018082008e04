import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, type CliResult, cliEnv, runCli, startCli } from '../support/cli-runner.js';
import { services, uniqueName } from '../support/services.js';

/**
 * `outboxer relay` checks its schema and its broker before its loop: a misconfiguration exits 2 at once with
 * one line that says what to fix (password hidden); a server that is merely down is waited out.
 */
const canary = `CANARY${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const amqpAt = (port: number, path = '', password = 'guest') => `amqp://guest:${password}@127.0.0.1:${port}${path}`;
const postgresPort = Number(new URL(services.postgresUrl).port || 5432);
const natsPort = Number(new URL(services.natsUrl).port || 4222);
const amqpPort = Number(new URL(services.amqpUrl).port || 5672);

let pool: pg.Pool;
const schemas: string[] = [];
const running: CliProcess[] = [];

beforeAll(() => {
  pool = new pg.Pool({ connectionString: services.postgresUrl, max: 2 });
  pool.on('error', () => undefined);
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((cli) => (cli.running ? cli.stop('SIGKILL') : cli.exited)));
  for (const schema of schemas.splice(0)) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
});
afterAll(async () => {
  await pool.end();
});

async function migratedSchema(): Promise<string> {
  const schema = uniqueName('ff');
  schemas.push(schema);
  const result = await runCli(['migrate', '--schema', schema], cliEnv({ OUTBOXER_DATABASE_URL: services.postgresUrl }));
  expect(result.code, result.stderr).toBe(0);
  return schema;
}

/** The relay against `databaseUrl` and `schema`, with extra flags; runs to its exit, bounded. */
function relay(databaseUrl: string, schema: string, flags: readonly string[]): Promise<CliResult> {
  return runCli(['relay', '--schema', schema, ...flags], cliEnv({ OUTBOXER_DATABASE_URL: databaseUrl }), 30_000);
}

/** Exit 2, nothing on stdout, one line `outboxer relay: <code>: …` (the rest is JSON logs), no stack, no password. */
function expectMisconfiguration(result: CliResult, code: string, text: RegExp): string {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stdout).toBe('');
  const lines = result.stderr.split('\n').filter((l) => l.startsWith('outboxer relay: '));
  expect(lines, result.stderr).toHaveLength(1);
  const line = lines[0] ?? '';
  expect(line.startsWith(`outboxer relay: ${code}: `), result.stderr).toBe(true);
  expect(line).toMatch(text);
  expect(result.stderr).not.toContain(canary);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(result.stderr).not.toContain('Usage: outboxer'); // not a usage error: the command line was fine
  return line;
}

describe('outboxer relay fails fast on a misconfigured database', () => {
  it('a schema that was never migrated: OUTBOXER_NOT_MIGRATED with the fix, instead of looping', async () => {
    const schema = uniqueName('missing');
    const started = Date.now();
    const result = await relay(services.postgresUrl, schema, ['--publisher', 'console']);
    expectMisconfiguration(result, 'OUTBOXER_NOT_MIGRATED', new RegExp(`"${schema}"\\."outbox" is not migrated .*run 'outboxer migrate'`));
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('a table migrated by an older outboxer: OUTBOXER_NOT_MIGRATED names the missing versions', async () => {
    const schema = await migratedSchema();
    await pool.query(`DELETE FROM "${schema}".outboxer_migrations WHERE version = (SELECT max(version) FROM "${schema}".outboxer_migrations)`);
    const result = await relay(services.postgresUrl, schema, ['--publisher', 'console']);
    expectMisconfiguration(result, 'OUTBOXER_NOT_MIGRATED', /versions \d+ of \d+ are missing/);
  });

  it('a PostgreSQL URL pointing at MariaDB (port 3306): OUTBOXER_WRONG_PROTOCOL, password hidden', async () => {
    const result = await relay(`postgres://postgres:${canary}@127.0.0.1:3306/test`, 'public', ['--publisher', 'console']);
    expectMisconfiguration(
      result,
      'OUTBOXER_WRONG_PROTOCOL',
      /does not speak the PostgreSQL protocol.*MariaDB.*\(database postgres:\/\/\*\*\*:\*\*\*@127\.0\.0\.1:3306\/test\)/,
    );
  });

  it('a role PostgreSQL does not know: OUTBOXER_AUTH_FAILED', async () => {
    const result = await relay(`postgres://nobody_${randomUUID().slice(0, 8)}:${canary}@127.0.0.1:${postgresPort}/test`, 'public', ['--publisher', 'console']);
    expectMisconfiguration(result, 'OUTBOXER_AUTH_FAILED', /PostgreSQL refused the connection/);
  });

  it('a database that does not exist: OUTBOXER_DATABASE_NOT_FOUND', async () => {
    const result = await relay(`postgres://postgres@127.0.0.1:${postgresPort}/nodb_${randomUUID().slice(0, 8)}`, 'public', ['--publisher', 'console']);
    expectMisconfiguration(result, 'OUTBOXER_DATABASE_NOT_FOUND', /does not exist/);
  });
});

describe('outboxer relay fails fast on a misconfigured broker', () => {
  it('a RabbitMQ vhost that does not exist: OUTBOXER_VHOST_REFUSED (not "Expected ConnectionOpenOk")', async () => {
    const schema = await migratedSchema();
    const vhost = uniqueName('novhost');
    const result = await relay(services.postgresUrl, schema, ['--publisher', 'rabbitmq', '--broker-url', amqpAt(amqpPort, `/${vhost}`)]);
    expectMisconfiguration(
      result,
      'OUTBOXER_VHOST_REFUSED',
      new RegExp(`refused virtual host "${vhost}".*\\(broker amqp://\\*\\*\\*:\\*\\*\\*@127\\.0\\.0\\.1:${amqpPort}/${vhost}\\)`),
    );
  });

  it('a wrong RabbitMQ password: OUTBOXER_AUTH_FAILED, the password never shown', async () => {
    const schema = await migratedSchema();
    const result = await relay(services.postgresUrl, schema, ['--publisher', 'rabbitmq', '--broker-url', amqpAt(amqpPort, '', canary)]);
    expectMisconfiguration(result, 'OUTBOXER_AUTH_FAILED', /refused the user name or password/);
  });

  it.each([
    ['PostgreSQL', postgresPort],
    ['NATS', natsPort],
  ])('an AMQP URL pointing at the %s port: OUTBOXER_WRONG_PROTOCOL (not "Frame size exceeds maxFrameSize")', async (_server, port) => {
    const schema = await migratedSchema();
    const result = await relay(services.postgresUrl, schema, ['--publisher', 'rabbitmq', '--broker-url', amqpAt(port, '', canary)]);
    expectMisconfiguration(result, 'OUTBOXER_WRONG_PROTOCOL', /does not speak AMQP 0-9-1.*RabbitMQ's port/);
  });
});

describe('outboxer relay start checks that pass, or wait', () => {
  it('declares the exchange at start, before any message is published', async () => {
    const schema = await migratedSchema();
    const exchange = uniqueName('ff_ex');
    const cli = startCli(
      ['relay', '--schema', schema, '--publisher', 'rabbitmq', '--broker-url', services.amqpUrl, '--exchange', exchange],
      cliEnv({ OUTBOXER_DATABASE_URL: services.postgresUrl }),
    );
    running.push(cli);
    await cli.waitForOutput((out) => out.stderr.includes('"relay started"'), 'the relay to start');
    const connection = await amqp.connect(services.amqpUrl);
    try {
      const channel = await connection.createChannel();
      await expect(channel.checkExchange(exchange)).resolves.toBeDefined();
      await channel.deleteExchange(exchange);
    } finally {
      await connection.close();
    }
    expect((await cli.stop('SIGTERM')).code).toBe(0);
  });

  it('a broker that is merely down at start is waited out: the relay starts, says so, and stops on SIGTERM', async () => {
    const schema = await migratedSchema();
    const cli = startCli(
      ['relay', '--schema', schema, '--publisher', 'rabbitmq', '--broker-url', amqpAt(1, '', canary)],
      cliEnv({ OUTBOXER_DATABASE_URL: services.postgresUrl }),
    );
    running.push(cli);
    await cli.waitForOutput((out) => out.stderr.includes('"relay started"'), 'the relay to start');
    expect(cli.stderr).toMatch(/start check: the broker is out of reach now/);
    expect(cli.stderr).toContain('OUTBOXER_BROKER_UNAVAILABLE');
    const result = await cli.stop('SIGTERM');
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain(canary);
  });
});
