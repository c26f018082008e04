import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import pg from 'pg';
import { services, uniqueName } from './services.js';
import { waitFor } from './wait-for.js';

const run = promisify(execFile);

/** A database of its own, for code that uses the default schema `public` as a user's would. */
export interface FreshDatabase {
  readonly url: string;
  readonly pool: pg.Pool;
  drop(): Promise<void>;
}

export async function freshDatabase(): Promise<FreshDatabase> {
  const name = uniqueName('db');
  const admin = new pg.Client({ connectionString: services.postgresUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(services.postgresUrl);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
  pool.on('error', () => undefined);
  return {
    url: url.toString(),
    pool,
    async drop() {
      await pool.end();
      const dropper = new pg.Client({ connectionString: services.postgresUrl });
      await dropper.connect();
      try {
        await dropper.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}

/** A RabbitMQ vhost with nothing declared in it, that guest may use; deleted with all it holds. */
export interface FreshVhost {
  readonly name: string;
  readonly url: string;
  /** Queue and exchange names in it, except the built-in ones. */
  declared(): Promise<{ queues: string[]; exchanges: string[] }>;
  delete(): Promise<void>;
}

export async function freshVhost(): Promise<FreshVhost> {
  const name = uniqueName('vh');
  await run('rabbitmqctl', ['add_vhost', name], { timeout: 60_000 });
  await run('rabbitmqctl', ['set_permissions', '-p', name, 'guest', '.*', '.*', '.*'], { timeout: 60_000 });
  const list = async (what: string) => {
    const { stdout } = await run('rabbitmqctl', [what, '-p', name, '-q', '--no-table-headers', 'name'], { timeout: 60_000 });
    return stdout
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('amq.'));
  };
  return {
    name,
    url: `${services.amqpUrl.replace(/\/$/, '')}/${encodeURIComponent(name)}`,
    declared: async () => ({ queues: await list('list_queues'), exchanges: await list('list_exchanges') }),
    async delete() {
      await run('rabbitmqctl', ['delete_vhost', name], { timeout: 60_000 });
    },
  };
}

/**
 * On `url` (a fresh vhost): the durable topic exchange `outbox` the examples publish to, with a queue `everything`
 * bound to `#`; `next()` gets the next message from it. `close()` ends the connection.
 */
export async function catchAllQueue(url: string): Promise<{ readonly channel: amqp.Channel; next(): Promise<amqp.GetMessage>; close(): Promise<void> }> {
  const connection = await amqp.connect(url);
  const channel = await connection.createChannel();
  await channel.assertExchange('outbox', 'topic', { durable: true });
  await channel.assertQueue('everything', { durable: true });
  await channel.bindQueue('everything', 'outbox', '#');
  return {
    channel,
    next: () => waitFor(async () => (await channel.get('everything', { noAck: true })) || undefined, { what: 'a message on the queue everything' }),
    close: () => connection.close(),
  };
}
