/**
 * The main job on the embedded default: an order service that writes business rows and outbox
 * messages in one transaction, with the relay in-process. No server needed (PGlite + an in-memory
 * destination); flags switch to real PostgreSQL and RabbitMQ or NATS:
 *
 *   npm start
 *   npm start -- --database-url postgres://postgres@127.0.0.1:5432/test --broker rabbitmq
 *   npm start -- --broker nats --broker-url nats://127.0.0.1:4222
 */
import { parseArgs } from 'node:util';
import { Outbox, type OutboxMessage, type Publisher, redactUrl } from '../src/index.js';
import { createDemoConsumer } from './demo-consumer.js';
import type { SqlExecutor } from '../src/stores/postgres/database.js';
import { createFlakyDestination } from './flaky-destination.js';
import { openDemoDatabase } from './demo-database.js';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string', default: process.env.OUTBOXER_DATABASE_URL },
    broker: { type: 'string', default: process.env.OUTBOXER_PUBLISHER || 'memory' },
    'broker-url': { type: 'string', default: process.env.OUTBOXER_BROKER_URL },
    orders: { type: 'string', default: '5' },
  },
});

const say = (who: string, text: string) => console.log(`${new Date().toISOString().slice(11, 23)} [${who.padEnd(7)}] ${text}`);

async function createPublisher(deliver: (message: OutboxMessage) => void): Promise<{ publisher: Publisher; describe: string }> {
  switch (values.broker) {
    case 'memory':
      return {
        publisher: createFlakyDestination({ failFirstAttemptOf: 3, say, deliver }),
        describe: 'in-memory destination (fails once, redelivers once, on purpose) with a shipping consumer behind an inbox',
      };
    case 'rabbitmq': {
      const url = values['broker-url'] ?? 'amqp://guest:guest@127.0.0.1:5672';
      const { createRabbitMqPublisher } = await import('../src/publishers/rabbitmq/index.js');
      return { publisher: createRabbitMqPublisher({ url, exchange: 'outbox' }), describe: `RabbitMQ ${redactUrl(url)}, exchange "outbox"` };
    }
    case 'nats': {
      const url = values['broker-url'] ?? 'nats://127.0.0.1:4222';
      const { createNatsPublisher } = await import('../src/publishers/nats/index.js');
      return { publisher: createNatsPublisher({ servers: url }), describe: `NATS JetStream ${redactUrl(url)} (needs a stream on "orders.>")` };
    }
    default:
      throw new Error(`--broker must be memory, rabbitmq or nats; got ${values.broker}`);
  }
}

async function main(): Promise<void> {
  const orderCount = Number(values.orders);
  const database = await openDemoDatabase(values['database-url']);
  const consumer = createDemoConsumer(database, say);
  const { publisher, describe } = await createPublisher((message) => consumer.deliver(message));
  say('setup', `database: ${database.describe}; destination: ${describe}`);

  const outbox = new Outbox<SqlExecutor>(database.store);
  const published = new Set<string>();
  const relay = outbox.createRelay(publisher, {
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
  });
  relay.start();

  const committed: string[] = [];
  for (let n = 1; n <= orderCount; n++) {
    const rollBack = n === 2;
    try {
      // outbox.transaction hands the committed events straight to the in-process relay (no claim query).
      const id = await outbox.transaction(database, async (tx) => {
        await tx.query(`INSERT INTO ${database.ordersTable} (order_no, total_cents) VALUES ($1, $2)`, [n, n * 1250]);
        const messageId = await outbox.enqueue(tx, {
          topic: 'orders.created',
          type: 'order.created',
          key: `order-${n}`,
          payload: { orderNo: n, totalCents: n * 1250 },
          headers: { 'correlation-id': `demo-${n}` },
        });
        if (rollBack) throw new Error('card declined');
        return messageId;
      });
      committed.push(id);
      say('service', `order ${n} committed with event ${id}`);
    } catch (error) {
      say('service', `order ${n} rolled back (${(error as Error).message}): its event is gone with it`);
    }
  }

  const deadline = Date.now() + 30_000;
  while (committed.some((id) => !published.has(id)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await relay.stop();
  if (values.broker === 'memory') {
    say('summary', `shipping applied ${await consumer.settled()} orders once each (a redelivered copy was skipped by the inbox)`);
  }
  const stats = await database.store.stats();
  say('summary', `${committed.length} committed, ${published.size} published, ${orderCount - committed.length} rolled back; outbox now ${JSON.stringify(stats)}`);
  await publisher.close();
  await database.close();
  if (committed.some((id) => !published.has(id))) {
    say('summary', 'some committed events were not published within 30 s');
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
