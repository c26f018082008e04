import amqp from 'amqplib';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, startScript } from '../support/cli-runner.js';
import { freshDatabase, freshVhost } from '../support/fresh-services.js';
import { waitFor } from '../support/wait-for.js';

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
    const connection = await amqp.connect(host.url);
    cleanups.push(() => connection.close());
    const channel = await connection.createChannel();
    await channel.assertExchange('outbox', 'topic', { durable: true });
    await channel.assertQueue('everything', { durable: true });
    await channel.bindQueue('everything', 'outbox', '#');

    const exit = await startScript('examples/publishers/amqp10.ts', [], cliEnv({ DATABASE_URL: db.url, AMQP10_URL: host.url })).waitForExit(60_000);
    expect({ code: exit.code, stderr: exit.stderr }).toEqual({ code: 0, stderr: '' });
    const delivery = await waitFor(async () => (await channel.get('everything', { noAck: true })) || undefined, { what: 'the published message' });
    expect(delivery.fields.routingKey).toBe('orders.created');
    expect(delivery.properties.contentType).toBe('application/json');
    expect(JSON.parse(delivery.content.toString('utf8'))).toEqual({ id: 1 });
  });
});
