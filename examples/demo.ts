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
 *   npm start -- --help
 *
 * A mistake in the flags is one line and exit 2, before anything connects. A broker or database that is down or
 * refuses the demo is one line with its code and URL, as `outboxer relay` says it, and exit 1; a run that fails
 * removes what it made, as a run that succeeds does.
 */
import { randomBytes } from 'node:crypto';
import { ConfigurationError, describeError, Outbox, type OutboxMessage, type Publisher, type TransactionRunner } from '../src/index.js';
import { DEMO_USAGE, type DemoArgs, parseDemoArgs } from './demo-args.js';
import { type DemoBroker, openDemoBroker } from './demo-broker.js';
import type { Shipping } from './demo-consumer.js';
import { type DemoDatabase, openDemoDatabase } from './demo-database.js';

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

/**
 * The story, once the broker, the database and the shipping consumer are up: orders placed (order 2 rolls back),
 * the relay publishing them, every committed order shipped once, and a copy skipped by the inbox. Returns the exit
 * code: 1 when some committed event was not published and shipped within 30 s.
 */
async function tellStory(args: DemoArgs, database: DemoDatabase, broker: DemoBroker, shipping: Shipping, outbox: Outbox<unknown>): Promise<number> {
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
  for (let n = 1; n <= args.orders; n++) {
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
  let done = await until(async () => committed.every((id) => published.has(id)) && (await shipping.shipped()) === committed.length, deadline);
  const first = publisher.first();
  if (done && first !== undefined && args.broker !== 'memory') {
    say('demo', `publishing a copy of ${first.id} again, as a relay that died between the broker's confirmation and its mark would`);
    await broker.publishCopy(first);
    done = await until(async () => shipping.duplicatesSkipped() >= broker.copiesDelivered, deadline);
  }

  await outbox.close();
  await broker.close(args.keep);
  const shipped = await shipping.shipped();
  say('summary', `shipping applied ${shipped} orders once each; duplicate deliveries skipped by the inbox: ${shipping.duplicatesSkipped()}`);
  const stats = await database.store.stats();
  say('summary', `${committed.length} committed, ${published.size} published, ${args.orders - committed.length} rolled back; outbox now ${JSON.stringify(stats)}`);
  if (done && shipped === committed.length) return 0;
  say('summary', 'some committed events were not published and shipped within 30 s');
  return 1;
}

/** Runs a cleanup step; a failure is said on stderr and the other steps still run. */
async function cleanUp(what: string, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (error) {
    console.error(`demo: cleaning up the ${what} failed: ${describeError(error)}`);
  }
}

/**
 * One run: the broker checked first (nothing is made in the database for a broker that is down or refuses the
 * demo), then the database, then the story. On every path, failed or not, what the run opened is closed and what
 * it made is removed (unless --keep), in reverse order.
 */
async function run(args: DemoArgs): Promise<number> {
  const runId = randomBytes(3).toString('hex');
  let broker: DemoBroker | undefined;
  let database: DemoDatabase | undefined;
  let outbox: Outbox<unknown> | undefined;
  try {
    broker = await openDemoBroker({ kind: args.broker, url: args.brokerUrl, runId, say });
    database = await openDemoDatabase(args.databaseUrl, `outboxer_demo_${runId}`);
    say('setup', `database: ${database.describe}, ${database.place}; destination: ${broker.describe}`);
    const shipping = await broker.startShipping(database);
    outbox = new Outbox(database.store);
    return await tellStory(args, database, broker, shipping, outbox);
  } finally {
    await cleanUp('relay', async () => outbox?.close());
    await cleanUp('broker', async () => broker?.close(args.keep));
    const opened = database;
    if (opened !== undefined) await cleanUp('database', async () => say('cleanup', await opened.close(args.keep)));
  }
}

/** Exit code: 0 the whole story, 1 a failure (one line on stderr, after the cleanup), 2 a usage error (one line). */
async function main(argv: readonly string[]): Promise<number> {
  let args: DemoArgs;
  try {
    args = parseDemoArgs(argv, process.env);
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    console.error(`demo: ${error.message}`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(DEMO_USAGE);
    return 0;
  }
  try {
    return await run(args);
  } catch (error) {
    console.error(`demo failed: ${describeError(error).replace(/\s+/g, ' ')}`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
