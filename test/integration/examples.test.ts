import { DiscardPolicy, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import amqp from 'amqplib';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, PROMPT_EXIT_MS, startScript } from '../support/cli-runner.js';
import { catchAllQueue, freshDatabase, freshVhost, type FreshDatabase, type FreshVhost } from '../support/fresh-services.js';
import { natsAdmin, PrivateNatsServer, readStream } from '../support/nats-harness.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The files under examples/ are the code blocks of README.md and docs/ (test/unit/doc-snippets.test.ts):
 * here they run as a user runs them, on a database and a vhost of their own, so they keep the defaults
 * a user gets (schema public, exchange outbox).
 */
describe('the examples the docs show', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const database = async (): Promise<FreshDatabase> => {
    const db = await freshDatabase();
    cleanups.push(() => db.drop());
    return db;
  };
  const vhost = async (): Promise<FreshVhost> => {
    const host = await freshVhost();
    cleanups.push(() => host.delete());
    return host;
  };

  it('README producer and consumer in one service: orders flow to the consumer, and SIGTERM ends it promptly (no lingering timer or connection) with nothing lost, leased or left unacked', async () => {
    const [db, host] = await Promise.all([database(), vhost()]);
    await db.pool.query(`CREATE TABLE orders (id int PRIMARY KEY, status text NOT NULL DEFAULT 'new');
      CREATE TABLE invoices (order_id int PRIMARY KEY, paid_at text);
      INSERT INTO orders (id) SELECT g FROM generate_series(1, 100000) g;
      INSERT INTO invoices (order_id) SELECT g FROM generate_series(1, 100000) g;`);
    const service = startScript('examples/service.ts', [], cliEnv({ DATABASE_URL: db.url, AMQP_URL: host.url }));
    cleanups.push(async () => {
      if (service.running) await service.stop('SIGKILL');
    });
    const consumed = async () => Number((await db.pool.query(`SELECT count(*) FILTER (WHERE state = 'processed') AS n FROM outbox_inbox`)).rows[0].n);
    await waitFor(async () => service.running && (await consumed()) >= 20, { timeoutMs: 60_000, what: `20 orders consumed\n${service.stderr}` });

    service.child.kill('SIGTERM');
    const signalled = performance.now();
    const exit = await service.waitForExit(30_000);
    const exitedAfterMs = performance.now() - signalled;
    expect({ code: exit.code, signal: exit.signal, stderr: exit.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(exitedAfterMs).toBeLessThan(PROMPT_EXIT_MS);

    const paid = Number((await db.pool.query(`SELECT count(*) AS n FROM orders WHERE status = 'paid'`)).rows[0].n);
    const unpublished = Number((await db.pool.query(`SELECT count(*) AS n FROM outbox WHERE state = 'pending'`)).rows[0].n);
    const dead = Number((await db.pool.query(`SELECT count(*) AS n FROM outbox WHERE state = 'dead'`)).rows[0].n);
    const invoiced = Number((await db.pool.query('SELECT count(*) AS n FROM invoices WHERE paid_at IS NOT NULL')).rows[0].n);
    const connection = await amqp.connect(host.url);
    const { messageCount: queued } = await (await connection.createChannel()).checkQueue('billing');
    await connection.close();
    expect(dead).toBe(0);
    // every committed order.paid: consumed once, or waiting in the queue, or (committed last) waiting in the outbox
    expect((await consumed()) + queued + unpublished).toBe(paid);
    expect(invoiced).toBe(await consumed());
    expect(paid).toBeGreaterThanOrEqual(20);
  });

  it('README PGlite snippet stores its message in the embedded database', async () => {
    const run = startScript('examples/pglite.ts', [], cliEnv());
    const exit = await run.waitForExit(60_000);
    expect(exit.code).toBe(0);
    expect(JSON.parse(exit.stdout)).toMatchObject({ pending: 1, dead: 0 });
  });

  it('README SQLite snippet stores its message and the order in one transaction in a SQLite file', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'outboxer-example-'));
    cleanups.push(async () => rmSync(directory, { recursive: true, force: true }));
    const run = startScript('examples/sqlite.ts', [], cliEnv({ SQLITE_FILE: join(directory, 'app.db') }));
    const exit = await run.waitForExit(60_000);
    expect(exit.code, exit.stderr).toBe(0);
    expect(JSON.parse(exit.stdout)).toMatchObject({ pending: 1, dead: 0 });
  });

  it('docs/publishers/rabbitmq.md publishes through the relay to the exchange, and the program ends', async () => {
    const [db, host] = await Promise.all([database(), vhost()]);
    const queue = await catchAllQueue(host.url);
    cleanups.push(() => queue.close());
    const exit = await startScript('examples/publishers/rabbitmq.ts', [], cliEnv({ DATABASE_URL: db.url, AMQP_URL: host.url })).waitForExit(60_000);
    expect({ code: exit.code, stderr: exit.stderr }).toEqual({ code: 0, stderr: '' });
    const delivery = await queue.next();
    expect(delivery.fields.routingKey).toBe('orders.created');
    expect(JSON.parse(delivery.content.toString('utf8'))).toEqual({ id: 1 });
  });

  it('docs/publishers/nats.md publishes through the relay to the stream, and the program ends', async () => {
    const db = await database();
    const nats = await PrivateNatsServer.create();
    cleanups.push(() => nats.destroy());
    await nats.start();
    const admin = await natsAdmin(nats.adminOptions());
    cleanups.push(() => admin.close());
    // the stream of the page's `nats stream add` command, which a single server accepts (with 3 replicas it does not)
    const stream = {
      name: 'EVENTS',
      subjects: ['events.>'],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      max_age: nanos(7 * 24 * 3600_000),
      duplicate_window: nanos(600_000),
      max_msg_size: 1024 * 1024,
      discard: DiscardPolicy.Old,
    };
    await expect(admin.jsm.streams.add({ ...stream, num_replicas: 3 })).rejects.toThrow(/replicas/i);
    await admin.jsm.streams.add({ ...stream, num_replicas: 1 });
    const exit = await startScript('examples/publishers/nats.ts', [], cliEnv({ DATABASE_URL: db.url, NATS_URL: nats.url })).waitForExit(60_000);
    expect({ code: exit.code, stderr: exit.stderr }).toEqual({ code: 0, stderr: '' });
    const messages = await readStream(admin, 'EVENTS');
    expect(messages.map((message) => [message.topic, JSON.parse(message.body)])).toEqual([['events.orders.created', { id: 1 }]]);
  });
});
