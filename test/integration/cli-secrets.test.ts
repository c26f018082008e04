import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cliFixtures, unreachable } from '../support/cli-fixtures.js';
import { cliEnv, runCli } from '../support/cli-runner.js';

const { pool, start, migrated, insert, countRows } = cliFixtures();

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
    expect(errorLine).toMatch(/^outboxer [a-z ]+: OUTBOXER_DATABASE_UNAVAILABLE: .*ECONNREFUSED.*\(database postgres:\/\/\*\*\*:\*\*\*@127\.0\.0\.1:1\/test\)/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('never prints the password from the environment, even through a long outage of the relay', async () => {
    const env = cliEnv({ OUTBOXER_DATABASE_URL: unreachable(special), OUTBOXER_LOG_LEVEL: 'debug' });
    const relay = start(['relay'], env);
    await relay.waitForOutput((out) => (out.stderr.match(/relay (round|lease step) failed/g) ?? []).length >= 2, 'two failed rounds');
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
    const relay = start(['relay', '--publisher', publisher, '--poll-interval-ms', '50', '--publish-timeout-ms', '2000', '--lease-ms', '6000'], env);
    // The message is attempted and fails, the relay says why, and the message waits uncounted: the outage is survived.
    await relay.waitForOutput((out) => out.stderr.includes('OUTBOXER_BROKER_UNAVAILABLE'), 'a failed publish attempt');
    expect(await countRows(table, `state = 'pending' AND attempts = 0`)).toBe(1);
    expect(relay.running).toBe(true);
    const result = await relay.stop('SIGTERM');
    expect(result.code, result.stderr).toBe(0);
    expect(leaks(result)).toBe(false);
    const lastError = (await pool.query(`SELECT last_error FROM ${table}`)).rows[0].last_error as string | null; // engine v2 writes none
    expect(lastError ?? '').not.toContain(canary);
  });
});
