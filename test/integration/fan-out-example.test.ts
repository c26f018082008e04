import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, startScript } from '../support/cli-runner.js';
import { catchAllQueue, freshDatabase, freshVhost } from '../support/fresh-services.js';
import { newSecret, WebhookReceiver } from '../support/webhook-harness.js';

/** The code block of docs/fan-out.md (examples/fan-out.ts) run as a user runs it, on a database, a vhost and a receiver of its own. */
describe('the docs/fan-out.md example', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('publishes the order to the exchange with its headers, and to the partner signed and stripped to correlation-id', async () => {
    const [db, host] = await Promise.all([freshDatabase(), freshVhost()]);
    cleanups.push(
      () => db.drop(),
      () => host.delete(),
    );
    const queue = await catchAllQueue(host.url);
    cleanups.push(() => queue.close());
    const partner = await WebhookReceiver.start();
    cleanups.push(() => partner.close());
    const secret = newSecret();

    const env = cliEnv({ DATABASE_URL: db.url, AMQP_URL: host.url, PARTNER_WEBHOOK_URL: partner.url(), PARTNER_WEBHOOK_SECRET: secret });
    const exit = await startScript('examples/fan-out.ts', [], env).waitForExit(60_000);
    expect({ code: exit.code, stderr: exit.stderr }).toEqual({ code: 0, stderr: '' });

    const delivery = await queue.next();
    expect(delivery.fields.routingKey).toBe('orders.created');
    expect(delivery.properties.headers).toMatchObject({ tenant: 'acme', 'correlation-id': 'c-1' });
    const [request] = partner.requests;
    const headers = Object.fromEntries(Object.entries(request?.headers ?? {}).map(([name, value]) => [name, String(value)]));
    expect(() => new Webhook(secret).verify(request?.body.toString('utf8') ?? '', headers)).not.toThrow();
    expect(JSON.parse(request?.body.toString('utf8') ?? '')).toEqual({ id: 1 });
    expect(Object.keys(headers).filter((name) => name.includes('tenant'))).toEqual([]);
    expect(Object.values(headers)).toContain('c-1');
    expect(headers['webhook-id']).not.toBe(delivery.properties.messageId);
  });
});
