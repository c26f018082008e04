import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, startScript } from '../support/cli-runner.js';
import { freshDatabase } from '../support/fresh-services.js';
import { closedPort, newSecret } from '../support/webhook-harness.js';
import { waitFor } from '../support/wait-for.js';

describe('the example of docs/publishers/webhook.md', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('the receiver verifies and stores what the relay POSTs, once per webhook-id, and refuses a forged request', async () => {
    const db = await freshDatabase();
    cleanups.push(() => db.drop());
    const secret = newSecret();
    const port = await closedPort();
    const env = cliEnv({ DATABASE_URL: db.url, WEBHOOK_SECRET: secret, PORT: String(port) });

    const receiver = startScript('examples/publishers/webhook-receiver.ts', [], env);
    cleanups.push(async () => {
      if (receiver.running) await receiver.stop('SIGKILL');
    });
    await receiver.waitForOutput(({ stdout }) => stdout.includes('listening'), 'the receiver listening');

    const url = `http://127.0.0.1:${port}/outbox`;
    const relay = await startScript('examples/publishers/webhook.ts', [], { ...env, WEBHOOK_URL: url }).waitForExit(60_000);
    expect({ code: relay.code, stderr: relay.stderr }).toEqual({ code: 0, stderr: '' });
    const stored = await waitFor(
      async () =>
        (await db.pool.query('SELECT webhook_id, type, body FROM received_events')).rows[0] as { webhook_id: string; type: string; body: unknown } | undefined,
    );
    expect(stored).toMatchObject({ type: 'order.created', body: { id: 1 } });

    // a redelivery (same webhook-id, a fresh timestamp and signature) is answered 2xx and stored once
    const body = JSON.stringify({ id: 1 });
    const resend = (headers: Record<string, string>) =>
      fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'outbox-type': 'order.created', ...headers } });
    const signed = (key: string) => {
      const timestamp = new Date();
      return {
        'webhook-id': stored.webhook_id,
        'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
        'webhook-signature': new Webhook(key).sign(stored.webhook_id, timestamp, body),
      };
    };
    expect((await resend(signed(secret))).status).toBe(204);
    expect(Number((await db.pool.query('SELECT count(*) AS n FROM received_events')).rows[0].n)).toBe(1);
    expect((await resend(signed(newSecret()))).status).toBe(401);

    const exit = await receiver.stop('SIGTERM');
    expect({ code: exit.code, stderr: exit.stderr }).toEqual({ code: 0, stderr: '' });
  });
});
