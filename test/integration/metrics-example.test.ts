import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, startScript } from '../support/cli-runner.js';
import { freshDatabase } from '../support/fresh-services.js';
import { openAdmin } from '../support/rabbitmq-harness.js';
import { services, uniqueName } from '../support/services.js';

/** examples/metrics.ts is the code of docs/metrics.md (test/unit/doc-snippets.test.ts): here it runs as a user runs it. */
describe('docs/metrics.md example', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('serves its metrics on GET /metrics: the relay published, the inbox handled once and skipped the copy, and the program ends', async () => {
    const db = await freshDatabase();
    cleanups.push(() => db.drop());
    const admin = await openAdmin();
    const exchange = uniqueName('ox_metrics_ex');
    const queue = uniqueName('ox_metrics_q');
    await admin.channel.assertExchange(exchange, 'topic', { durable: true });
    await admin.channel.assertQueue(queue, { exclusive: true });
    await admin.channel.bindQueue(queue, exchange, '#');
    cleanups.push(async () => {
      await admin.channel.deleteExchange(exchange);
      await admin.close();
    });

    const run = startScript('examples/metrics.ts', [], cliEnv({ DATABASE_URL: db.url, AMQP_URL: services.amqpUrl, EXCHANGE: exchange, METRICS_PORT: '0' }));
    const exit = await run.waitForExit(60_000);
    expect({ code: exit.code, stderr: exit.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(exit.stdout)).toEqual({
      'outboxer_published_total{destination="default"}': 1,
      outboxer_broker_connected: 1,
      outboxer_relay_ready: 1,
      'outboxer_consumer_processed_total{consumer="billing"}': 1,
      'outboxer_consumer_duplicates_total{consumer="billing"}': 1,
    });
    expect((await admin.channel.checkQueue(queue)).messageCount).toBe(1);
  });
});
