/** The receiver of docs/publishers/webhook.md in a program that runs: it serves until SIGTERM. */
import { once } from 'node:events';

// #region docs/publishers/webhook.md
import { createServer } from 'node:http';
import pg from 'pg';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

const webhook = new Webhook(process.env.WEBHOOK_SECRET!); // the secret the publisher signs with
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
await pool.query('CREATE TABLE IF NOT EXISTS received_events (webhook_id uuid PRIMARY KEY, type text NOT NULL, body jsonb NOT NULL)');

const server = createServer(async (request, response) => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  let event: unknown;
  try {
    // the raw bytes, before any parsing; it also refuses a timestamp more than 5 minutes off
    event = webhook.verify(Buffer.concat(chunks), request.headers as Record<string, string>);
  } catch (error) {
    response.writeHead(error instanceof WebhookVerificationError ? 401 : 400).end();
    return;
  }
  try {
    // Store, then answer: the 2xx is the relay's only proof that the event is safe. A redelivery has the
    // same webhook-id, so ON CONFLICT turns it into a no-op that is answered 2xx all the same.
    const type = decodeURIComponent(String(request.headers['outbox-type']));
    await pool.query('INSERT INTO received_events (webhook_id, type, body) VALUES ($1, $2, $3) ON CONFLICT (webhook_id) DO NOTHING', [
      request.headers['webhook-id'], type, event,
    ]);
    response.writeHead(204).end();
  } catch {
    response.writeHead(503).end(); // not stored: the relay tries again later
  }
});
server.listen(Number(process.env.PORT ?? 8080));
// #endregion

await once(server, 'listening');
process.stdout.write('listening\n');
process.once('SIGTERM', () => {
  server.close();
  void pool.end();
});
