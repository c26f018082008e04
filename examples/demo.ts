/**
 * The main job on the embedded default: an order service that writes business rows and outbox
 * messages in one transaction, with the relay in-process, and a shipping service that consumes the
 * events through an inbox. No server needed (PGlite + an in-memory destination); flags switch to an
 * embedded SQLite file, to real PostgreSQL or MariaDB/MySQL, and to RabbitMQ or NATS, where the demo declares
 * what its consumer needs before producing and removes all it created at the end (unless --keep):
 *
 *   npm start
 *   npm start -- --database sqlite:./demo.db
 *   npm start -- --database mysql://root@127.0.0.1:3306/test
 *   npm start -- --database-url postgres://postgres@127.0.0.1:5432/test --broker rabbitmq
 *   npm start -- --database-url postgres://postgres@127.0.0.1:5432/test --broker nats --broker-url nats://127.0.0.1:4222
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Outbox, type OutboxMessage, type Publisher, type TransactionRunner } from '../src/index.js';
import { openDemoBroker } from './demo-broker.js';
import { openDemoDatabase } from './demo-database.js';

const { values } = parseArgs({
  options: {
    database: { type: 'string' },
    'database-url': { type: 'string' },
    broker: { type: 'string', default: process.env.OUTBOXER_PUBLISHER || 'memory' },
    'broker-url': { type: 'string', default: process.env.OUTBOXER_BROKER_URL || undefined },
    orders: { type: 'string', default: '5' },
    keep: { type: 'boolean', default: false },
  },
});

const say = (who: string, text: string) => console.log(`${new Date().toISOString().slice(11, 23)} [${who.padEnd(8)}] ${text}`);

/** Keeps the first message the relay published, to publish a copy of it later. */
function rememberingFirst(publisher: Publisher): Publisher & { readonly first: () => OutboxMessage | undefined } {
  let first: OutboxMessage | undefined;
  return {
    name: publisher.name,
    capabilities: publisher.capabilities,
    first: () => first,
    async publish(message) {
      await publisher.publish(message);
      first ??= message;
    },
    close: () => publisher.close(),
  };
}

async function until(condition: () => Promise<boolean>, deadline: number): Promise<boolean> {
  while (!(await condition())) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** `--database` and `--database-url` are the same option; OUTBOXER_DATABASE_URL when neither is given. */
function databaseUrl(): string | undefined {
  const { database, 'database-url': databaseUrl } = values;
  if (database !== undefined && databaseUrl !== undefined && database !== databaseUrl) {
    throw new Error('--database and --database-url name the same thing: give one of them');
  }
  return database ?? databaseUrl ?? process.env.OUTBOXER_DATABASE_URL;
}

async function main(): Promise<void> {
  const orderCount = Number(values.orders);
  const runId = randomBytes(3).toString('hex');
  const database = await openDemoDatabase(databaseUrl(), `outboxer_demo_${runId}`);
  const broker = await openDemoBroker({ kind: values.broker ?? 'memory', url: values['broker-url'], runId, database, say });
  say('setup', `database: ${database.describe}, ${database.place}; destination: ${broker.describe}`);
  await broker.start();

  const outbox = new Outbox(database.store);
  const publisher = rememberingFirst(broker.publisher);
  const published = new Set<string>();
  outbox
    .createRelay(publisher, {
      pollIntervalMs: 100,
      maxPollIntervalMs: 500,
      retry: { baseDelayMs: 300, maxDelayMs: 2000 },
      hooks: {
        onPublished: (e) => {
          published.add(e.id);
          say('relay', `published ${e.topic} ${e.id} (attempt ${e.attempts})`);
        },
        onRetry: (e) => say('relay', `publish of ${e.id} failed (${e.error}); retry in ${e.retryInMs} ms`),
        onDead: (e) => say('relay', `parked ${e.id} as dead: ${e.reason}`),
      },
    })
    .start();

  const committed: string[] = [];
  for (let n = 1; n <= orderCount; n++) {
    let eventId = '';
    // Says "committed" the moment the commit returns, before outbox.transaction hands the event to the relay.
    const saysCommitted: TransactionRunner<unknown> = {
      async transaction(work) {
        const result = await database.transaction(work);
        say('service', `order ${n} committed with event ${eventId}`);
        return result;
      },
    };
    try {
      await outbox.transaction(saysCommitted, async (tx) => {
        await database.insertOrder(tx, n, n * 1250);
        eventId = await outbox.enqueue(tx, {
          topic: 'orders.created',
          type: 'order.created',
          key: `order-${n}`,
          payload: { orderNo: n, totalCents: n * 1250 },
          headers: { 'correlation-id': `demo-${n}` },
        });
        if (n === 2) throw new Error('card declined');
      });
      committed.push(eventId);
    } catch (error) {
      say('service', `order ${n} rolled back (${(error as Error).message}): its event is gone with it`);
    }
  }

  const deadline = Date.now() + 30_000;
  let done = await until(async () => committed.every((id) => published.has(id)) && (await broker.shipping.shipped()) === committed.length, deadline);
  const first = publisher.first();
  if (done && first !== undefined && values.broker !== 'memory') {
    say('demo', `publishing a copy of ${first.id} again, as a relay that died between the broker's confirmation and its mark would`);
    await broker.publishCopy(first);
    done = await until(async () => broker.shipping.duplicatesSkipped() >= broker.copiesDelivered, deadline);
  }

  await outbox.close();
  await broker.close(values.keep);
  const shipped = await broker.shipping.shipped();
  say('summary', `shipping applied ${shipped} orders once each; duplicate deliveries skipped by the inbox: ${broker.shipping.duplicatesSkipped()}`);
  const stats = await database.store.stats();
  say('summary', `${committed.length} committed, ${published.size} published, ${orderCount - committed.length} rolled back; outbox now ${JSON.stringify(stats)}`);
  say('cleanup', await database.close(values.keep));
  if (!done || shipped !== committed.length) {
    say('summary', 'some committed events were not published and shipped within 30 s');
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
