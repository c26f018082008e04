import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, startScript } from '../support/cli-runner.js';
import { freshDatabase } from '../support/fresh-services.js';
import { PrivateRedisServer, raw, received, redisAdmin, xrange } from '../support/redis-harness.js';

/** The code blocks of docs/publishers/redis.md (examples/publishers/redis*.ts) run as a user runs them, on a database and a Redis of their own. */
describe('the docs/publishers/redis.md examples', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('publishes through the relay to the stream events:orders.created, and the XREADGROUP consumer reads it, acks it and ends', async () => {
    const db = await freshDatabase();
    cleanups.push(() => db.drop());
    const redis = await PrivateRedisServer.create();
    cleanups.push(() => redis.kill());
    await redis.start();
    const admin = await redisAdmin(redis.url());
    cleanups.push(async () => admin.destroy());

    const env = cliEnv({ DATABASE_URL: db.url, REDIS_URL: redis.url() });
    const relayed = await startScript('examples/publishers/redis.ts', [], env).waitForExit(60_000);
    expect({ code: relayed.code, stderr: relayed.stderr }).toEqual({ code: 0, stderr: '' });
    const entries = await xrange(admin, 'events:orders.created');
    const messages = entries.map((entry) => received('events:orders.created', 'events:', entry));
    expect(messages.map((m) => [m.topic, m.type, m.key, m.contentType, JSON.parse(m.body)])).toEqual([
      ['orders.created', 'order.created', 'order-1', 'application/json', { id: 1 }],
    ]);

    const consumed = await startScript('examples/publishers/redis-consumer.ts', [], env).waitForExit(60_000);
    expect({ code: consumed.code, stderr: consumed.stderr }).toEqual({ code: 0, stderr: '' });
    expect(
      consumed.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([{ id: messages[0]?.id, type: 'order.created', contentType: 'application/json', body: '{"id":1}' }]);
    const [pending] = await raw<[number]>(admin, ['XPENDING', 'events:orders.created', 'billing']);
    expect(pending).toBe(0);
  });
});
