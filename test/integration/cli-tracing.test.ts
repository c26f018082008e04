import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { cliFixtures } from '../support/cli-fixtures.js';
import { CliProcess } from '../support/cli-runner.js';
import { isolatedExchange } from '../support/rabbitmq-harness.js';
import { services } from '../support/services.js';
import type { SpanRecord } from '../support/tracing-harness.js';

const { pool, migrated } = cliFixtures();
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The CLI from source, as a user runs it with their SDK setup: `node --import tsx --import <setup> main.ts ...`
 * (the user's `node --import ./otel-setup.mjs node_modules/.bin/outboxer ...`). Killed after the test if it runs.
 */
function cliWithImport(setup: string, args: readonly string[], env: NodeJS.ProcessEnv): CliProcess {
  const cli = new CliProcess(['--import', 'tsx', '--import', setup, 'src/ops/cli/main.ts', ...args], env, { command: process.execPath, cwd: ROOT });
  cleanups.push(async () => {
    if (cli.running) await cli.stop('SIGKILL');
  });
  return cli;
}

function spansIn(file: string): SpanRecord[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as SpanRecord);
}

describe('outboxer relay --tracing', () => {
  it("publishes to RabbitMQ under a publish span that continues the message's trace, recorded by the SDK registered with node --import and flushed when the daemon stops", async () => {
    const { env, table } = await migrated();
    const rabbit = await isolatedExchange();
    cleanups.push(() => rabbit.cleanup());
    const dir = mkdtempSync(join(tmpdir(), 'outboxer-cli-tracing-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const spansFile = join(dir, 'spans.jsonl');

    const relay = cliWithImport(
      './test/support/otel-span-file-setup.ts',
      ['relay', '--publisher', 'rabbitmq', '--broker-url', services.amqpUrl, '--exchange', rabbit.exchange, '--tracing', '--poll-interval-ms', '50'],
      { ...env, OTEL_TEST_SPANS_FILE: spansFile },
    );
    await relay.waitForOutput((out) => out.stderr.includes('"relay started"'), 'the relay to start');

    // A producer that wrote its own trace context, with plain SQL: the row's traceparent is the creation context.
    const traceId = randomBytes(16).toString('hex');
    const parentSpanId = randomBytes(8).toString('hex');
    const traceparent = `00-${traceId}-${parentSpanId}-01`;
    const topic = rabbit.topic('order.placed');
    const inserted = await pool.query(
      `INSERT INTO ${table} (topic, type, key, payload, headers) VALUES ($1, 'order.placed', 'order-7', '{"n":1}', $2::jsonb) RETURNING id::text AS id`,
      [topic, JSON.stringify({ traceparent })],
    );
    const id = (inserted.rows[0] as { id: string }).id;

    const [delivery] = await rabbit.waitForDeliveries(1, 20_000);
    expect(delivery?.properties.messageId).toBe(id);
    expect(delivery?.properties.headers?.traceparent).toBe(traceparent); // consumers continue the creation context
    // the SDK buffers the span (its batch processor's timer is 10 min away): only the daemon's flush at exit exports it
    expect(existsSync(spansFile) ? spansIn(spansFile) : []).toEqual([]);

    const result = await relay.stop('SIGTERM');
    expect(result.code, result.stderr).toBe(0);
    const logs = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logs.find((line) => line.msg === 'outboxer relay starting')).toMatchObject({ publisher: 'rabbitmq', tracing: true });

    const [publish, ...more] = spansIn(spansFile).filter((span) => span.name === `publish ${topic}`);
    expect(more).toEqual([]);
    expect(publish).toMatchObject({
      kind: 'CLIENT',
      traceId,
      parentSpanId,
      links: [{ traceId, spanId: parentSpanId }],
      status: { code: 0 },
    });
    expect(publish?.attributes).toEqual({
      'messaging.system': 'rabbitmq',
      'messaging.operation.name': 'publish',
      'messaging.operation.type': 'send',
      'messaging.destination.name': topic,
      'messaging.rabbitmq.destination.routing_key': topic,
      'messaging.message.id': id,
      'outboxer.message.type': 'order.placed',
      'outboxer.message.attempts': 1,
    });
  });

  it('without @opentelemetry/api installed, --tracing exits 2 with one line saying what to install, and the relay without it never loads it', async () => {
    const { env, table } = await migrated();
    const missing = await cliWithImport('./test/support/hide-otel-api.ts', ['relay', '--tracing'], env).waitForExit();
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(
      /^outboxer relay: OUTBOXER_MISSING_DEPENDENCY: --tracing needs @opentelemetry\/api next to outboxer: npm install @opentelemetry\/api, and register an OpenTelemetry SDK before the CLI runs .*\n$/,
    );
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);

    const plain = cliWithImport('./test/support/hide-otel-api.ts', ['relay', '--poll-interval-ms', '50'], env);
    const [id] = (await pool.query(`INSERT INTO ${table} (topic, type, payload) VALUES ('orders.created', 'order.created', '{}') RETURNING id::text AS id`))
      .rows as { id: string }[];
    await plain.waitForOutput((out) => out.stdout.includes(`id=${id?.id}`), 'the message to be published without tracing');
    const result = await plain.stop('SIGTERM');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('opentelemetry');
  });
});
