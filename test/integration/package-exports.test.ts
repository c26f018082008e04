import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);

/** What a user gets from `import ... from 'outboxer/...'`: the built package, resolved through its exports map. */
describe('published package surface', () => {
  beforeAll(async () => {
    await run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { timeout: 120_000 });
  }, 130_000);

  it.each([
    ['outboxer', ['Outbox', 'Relay', 'OutboxerError', 'MessageValidationError', 'PublishError', 'redactUrl', 'validateMessage', 'failureAction', 'isMisconfiguration']],
    ['outboxer/postgres', ['PostgresOutboxStore', 'fromPgPool', 'safePoolConfig', 'migrationScript']],
    ['outboxer/pglite', ['PostgresOutboxStore', 'fromPglite']],
    ['outboxer/rabbitmq', ['createRabbitMqPublisher']],
    ['outboxer/nats', ['createNatsPublisher']],
    ['outboxer/console', ['createConsolePublisher']],
    ['outboxer/consumer', ['Inbox', 'MessageRegistry', 'PostgresInboxStore', 'InboxRetention', 'UnknownMessageTypeError']],
    ['outboxer/consumer/rabbitmq', ['createRabbitMqConsumer']],
    ['outboxer/consumer/nats', ['createNatsConsumer']],
  ])('%s exports its API', async (specifier, names) => {
    const script = `const m = await import(${JSON.stringify(specifier)}); console.log(JSON.stringify(Object.keys(m)));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
    const exported = JSON.parse(stdout) as string[];
    for (const name of names) expect(exported).toContain(name);
  });

  it('has no side effects at import: importing every entry point prints nothing and leaves no handle open', async () => {
    const script = `for (const s of ['outboxer','outboxer/postgres','outboxer/pglite','outboxer/rabbitmq','outboxer/nats','outboxer/console','outboxer/consumer','outboxer/consumer/rabbitmq','outboxer/consumer/nats']) await import(s);`;
    const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 10_000 });
    expect(stdout).toBe('');
    expect(stderr).toBe('');
  });
});
