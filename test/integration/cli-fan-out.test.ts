import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { cliFixtures, waitUntil } from '../support/cli-fixtures.js';
import { runCli } from '../support/cli-runner.js';
import { addStream, natsAdmin, readStream } from '../support/nats-harness.js';
import { isolatedExchange, toReceived } from '../support/rabbitmq-harness.js';
import { services } from '../support/services.js';
import { newSecret, receivedMessage, WebhookReceiver } from '../support/webhook-harness.js';

const { freshSchema, start, countRows, pool } = cliFixtures();
const shown = readFileSync(new URL('../../examples/fan-out-relay.json', import.meta.url), 'utf8');

/** `outboxer relay --config <file>` (docs/fan-out.md): its own publisher plus the file's destinations. */
describe('outboxer relay --config', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('is the file docs/fan-out.md shows', () => {
    expect(readFileSync(new URL('../../docs/fan-out.md', import.meta.url), 'utf8')).toContain(`\`\`\`json\n${shown}\`\`\``);
  });

  it("publishes each row to its destination with the file's envelope, and never logs the webhook secret", async () => {
    const rabbit = await isolatedExchange();
    cleanups.push(() => rabbit.cleanup());
    const nats = await natsAdmin();
    cleanups.push(() => nats.close());
    const stream = await addStream(nats, 'analytics');
    cleanups.push(() => nats.jsm.streams.delete(stream));
    const partner = await WebhookReceiver.start();
    cleanups.push(() => partner.close());
    const secret = newSecret();
    // the file of the docs, pointed at this test's receiver and NATS
    const config = JSON.parse(shown) as { destinations: Record<string, Record<string, unknown>> };
    Object.assign(config.destinations.partner ?? {}, { 'broker-url': partner.url(), 'webhook-secret': secret });
    Object.assign(config.destinations.analytics ?? {}, { 'broker-url': services.natsUrl });
    const dir = mkdtempSync(join(tmpdir(), 'outboxer-config-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'fan-out-relay.json');
    writeFileSync(file, JSON.stringify(config));

    const { env, table } = freshSchema({ OUTBOXER_MIGRATE: 'true' });
    const relay = start(
      ['relay', '--publisher', 'rabbitmq', '--broker-url', services.amqpUrl, '--exchange', rabbit.exchange, '--config', file, '--poll-interval-ms', '50'],
      env,
    );
    await relay.waitForOutput((out) => out.stderr.includes('"relay started"'), 'the relay to start');
    const topic = rabbit.topic('orders');
    await pool.query(
      `INSERT INTO ${table} (topic, key, type, payload, headers, destination)
       SELECT $1, 'k' || (n % 2), 'n' || n, jsonb_build_object('n', n), '{"tenant": "acme", "correlation-id": "c"}', d
       FROM generate_series(1, 4) AS n CROSS JOIN (VALUES (NULL), ('partner'), ('analytics')) AS routes(d) ORDER BY n`,
      [topic],
    );
    await waitUntil(async () => (await countRows(table)) === 0, 'every row published', relay);

    const fromRabbit = (await rabbit.waitForDeliveries(4)).map(toReceived);
    const fromPartner = (await partner.waitForRequests(4)).map(receivedMessage);
    const fromNats = await readStream(nats, stream);
    // order holds per key (k1: n1, n3; k0: n2, n4); the two keys' partitions publish side by side
    for (const received of [fromRabbit, fromPartner, fromNats]) {
      const types = received.map((m) => m.type);
      expect([...types].sort()).toEqual(['n1', 'n2', 'n3', 'n4']);
      expect(types.filter((type) => type === 'n1' || type === 'n3')).toEqual(['n1', 'n3']);
      expect(types.filter((type) => type === 'n2' || type === 'n4')).toEqual(['n2', 'n4']);
    }
    expect(fromNats.map((m) => m.topic)).toEqual(Array(4).fill(`analytics.${topic}`));
    expect(fromRabbit[0]?.headers.tenant).toBe('acme');
    expect(fromPartner[0]?.headers.tenant).toBeUndefined();
    expect(fromPartner[0]?.key).toBeNull();
    for (const request of partner.requests) new Webhook(secret).verify(request.body.toString('utf8'), request.headers as Record<string, string>);

    const result = await relay.stop('SIGTERM');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr + result.stdout).not.toContain(secret);
    const startup = result.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line.msg === 'outboxer relay starting');
    expect(startup?.destinations).toMatchObject({
      partner: { publisher: 'webhook', envelope: { key: false } },
      analytics: { publisher: 'nats', subjectPrefix: 'analytics' },
    });
  });

  it.each([
    ['{"destinations": {"partner": {"publisher": "webhook"}}}', /destination "partner": "publisher" webhook needs "broker-url"/],
    [
      '{"destinations": {"partner": {"publisher": "nats", "broker-url": "nats://x:1", "exchange": "e"}}}',
      /destination "partner": "exchange" applies only to rabbitmq, not to "publisher" nats/,
    ],
    ['{"destinations": {"default": {"publisher": "console"}}}', /default is the relay's own publisher/],
    ['{"destinations": {"p": {"publisher": "console", "envelope": {"headers": "some"}}}}', /destination "p": headers must be/],
    ['{"destinations": {"p": {"publisher": "console", "colour": 1}}}', /unknown field "colour"/],
    ['{"routes": []}', /expected an object \{ "destinations"/],
    ['not json', /not valid JSON/],
  ])('refuses a bad file with a usage error naming it: %s', async (text, error) => {
    const dir = mkdtempSync(join(tmpdir(), 'outboxer-config-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'bad.json');
    writeFileSync(file, text);
    const { env } = freshSchema();
    const result = await runCli(['relay', '--config', file], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(error);
    expect(result.stderr).toContain(`--config ${file}`);
  });
});
