import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, startScript } from '../support/cli-runner.js';
import { catchAllQueue, freshDatabase, freshVhost } from '../support/fresh-services.js';

describe('the example of docs/publishers/amqp10.md', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('publishes over AMQP 1.0 through the relay to exchange "outbox" of its virtual host, and the program ends', async () => {
    const db = await freshDatabase();
    cleanups.push(() => db.drop());
    const host = await freshVhost();
    cleanups.push(() => host.delete());
    const queue = await catchAllQueue(host.url);
    cleanups.push(() => queue.close());

    const exit = await startScript('examples/publishers/amqp10.ts', [], cliEnv({ DATABASE_URL: db.url, AMQP10_URL: host.url })).waitForExit(60_000);
    expect({ code: exit.code, stderr: exit.stderr }).toEqual({ code: 0, stderr: '' });
    const delivery = await queue.next();
    expect(delivery.fields.routingKey).toBe('orders.created');
    expect(delivery.properties.contentType).toBe('application/json');
    expect(JSON.parse(delivery.content.toString('utf8'))).toEqual({ id: 1 });
  });
});
