import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { jetstream } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import amqp from 'amqplib';
import pg from 'pg';
import { JSON_CONTENT_TYPE, type OutboxMessage } from '../../src/core/message.js';
import { bodyOf, headersOf, subjectFor } from '../../src/brokers/nats/wire.js';
import { toAmqpPublication } from '../../src/brokers/rabbitmq/wire.js';

/**
 * The ideal unordered relay of issue 23, the floor of what any relay must spend: one connection reads the next
 * `batch` rows by seq (`seq > last read`) while the previous batch publishes, every row goes out through the
 * broker's own client (amqplib confirm channel, `mandatory`; @nats-io/jetstream publish awaiting the PubAck) with
 * the relay's wire form, at most `window` unconfirmed across batches (oldest batch first), and each batch, once
 * all of it is confirmed, is deleted with one `DELETE ... WHERE seq = ANY($1)`. No leases, no key order, no
 * fencing, no retry (a failed publish stops it: the bench checks that none failed). Its table has the primary key
 * and nothing else. It runs as a process of its own (`node <build>/bench/contenders/ideal-relay.js ...`, transpiled
 * with the CLI by `buildCli`, see relay-floor.ts) so that its CPU can be read from /proc like the CLI relay's.
 */

export const IDEAL_READY = '"msg":"ideal relay starting"';
export const IDEAL_BATCH = 1_000;

/** Its table: what any outbox needs (the message and its position), keyed by seq only. */
export function idealTableSql(schema: string): string {
  return `CREATE SCHEMA "${schema}";
    CREATE TABLE "${schema}".outbox (seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, id uuid NOT NULL DEFAULT gen_random_uuid(),
      topic text NOT NULL, type text NOT NULL, key text, payload json NOT NULL, headers jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT clock_timestamp());`;
}

interface Row {
  seq: string;
  id: string;
  topic: string;
  type: string;
  key: string | null;
  payload: string;
  headers: Record<string, string>;
  created_at: Date;
}

type Publish = (message: OutboxMessage) => Promise<void>;

interface Broker {
  readonly publish: Publish;
  /** Messages the broker confirmed but could not route (RabbitMQ `mandatory` returns): failures too. */
  readonly unroutable: () => number;
  close(): Promise<void>;
}

async function rabbitMq(url: string, exchange: string): Promise<Broker> {
  const connection = await amqp.connect(url);
  const channel = await connection.createConfirmChannel();
  let returned = 0;
  channel.on('return', () => returned++);
  return {
    unroutable: () => returned,
    publish: (message) => {
      const publication = toAmqpPublication(message);
      return new Promise<void>((resolve, reject) => {
        channel.publish(exchange, publication.routingKey, publication.body, publication.properties, (error: unknown) =>
          error === null || error === undefined ? resolve() : reject(error instanceof Error ? error : new Error(String(error))),
        );
      });
    },
    async close() {
      await channel.close().catch(() => undefined);
      await connection.close().catch(() => undefined);
    },
  };
}

async function nats(url: string): Promise<Broker> {
  const nc = await natsConnect({ servers: url, noAsyncTraces: true });
  const js = jetstream(nc);
  return {
    unroutable: () => 0,
    publish: async (message) => {
      await js.publish(subjectFor(message, undefined), bodyOf(message), { msgID: message.id, headers: headersOf(message), timeout: 10_000 });
    },
    close: () => nc.close(),
  };
}

/** At most `size` holders; waiters are served in arrival order, so an older batch's rows go before a newer one's. */
class Window {
  #free: number;
  readonly #waiters: (() => void)[] = [];
  constructor(size: number) {
    this.#free = size;
  }
  acquire(): Promise<void> | undefined {
    if (this.#free > 0 && this.#waiters.length === 0) {
      this.#free--;
      return undefined;
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
  release(): void {
    const next = this.#waiters.shift();
    if (next === undefined) this.#free++;
    else next();
  }
}

export interface IdealRelayOptions {
  readonly databaseUrl: string;
  readonly schema: string;
  readonly broker: 'rabbitmq' | 'nats';
  readonly brokerUrl: string;
  /** RabbitMQ exchange. */
  readonly exchange?: string | undefined;
  readonly batch: number;
  readonly window: number;
  /** LISTENed to: a notification wakes an idle relay at once (else it polls every 250 ms). */
  readonly wakeChannel: string;
}

export interface IdealRelay {
  readonly published: () => number;
  readonly failures: () => number;
  stop(): Promise<void>;
}

export async function startIdealRelay(options: IdealRelayOptions): Promise<IdealRelay> {
  const client = new pg.Client({ connectionString: options.databaseUrl, application_name: 'bench ideal relay' });
  await client.connect();
  const broker = options.broker === 'rabbitmq' ? await rabbitMq(options.brokerUrl, options.exchange ?? '') : await nats(options.brokerUrl);
  const table = `"${options.schema}".outbox`;
  const read = {
    name: 'ideal_read',
    text: `SELECT seq, id, topic, type, key, payload::text AS payload, headers, created_at FROM ${table} WHERE seq > $1 ORDER BY seq LIMIT ${options.batch}`,
  };
  const remove = { name: 'ideal_delete', text: `DELETE FROM ${table} WHERE seq = ANY($1::int8[])` };
  const window = new Window(options.window);
  let published = 0;
  let failures = 0;
  let stopping = false;
  let wake: (() => void) | undefined;
  client.on('notification', () => wake?.());
  await client.query(`LISTEN "${options.wakeChannel}"`);

  const publishBatch = async (rows: Row[]): Promise<void> => {
    await Promise.all(
      rows.map(async (row) => {
        await window.acquire();
        try {
          await broker.publish({
            id: row.id,
            seq: row.seq,
            topic: row.topic,
            type: row.type,
            key: row.key,
            body: row.payload,
            contentType: JSON_CONTENT_TYPE,
            headers: row.headers,
            createdAt: row.created_at,
            attempts: 1,
            lastError: null,
          });
          published++;
        } catch (error) {
          failures++;
          throw error;
        } finally {
          window.release();
        }
      }),
    );
    await client.query({ ...remove, values: [rows.map((row) => row.seq)] });
  };

  const loop = async (): Promise<void> => {
    let after = '0';
    // The batch publishing and the one read behind it: a third is read only once the oldest is deleted.
    const batches: Promise<void>[] = [];
    while (!stopping) {
      if (batches.length >= 2) await batches.shift();
      const rows = (await client.query<Row>({ ...read, values: [after] })).rows;
      if (rows.length > 0) {
        after = (rows[rows.length - 1] as Row).seq;
        const batch = publishBatch(rows);
        batch.catch(() => undefined); // awaited below; a failure stops the relay there
        batches.push(batch);
        continue;
      }
      if (batches.length > 0) {
        await batches.shift();
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 250);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
    await Promise.all(batches);
  };
  const running = loop();
  running.catch(() => undefined);

  return {
    published: () => published,
    failures: () => failures + broker.unroutable(),
    async stop() {
      stopping = true;
      wake?.();
      try {
        await running;
      } finally {
        await broker.close();
        await client.end();
      }
    },
  };
}

/** `node ideal-relay.js --database-url … --schema … --broker rabbitmq|nats --broker-url … [--exchange …]`: runs until SIGTERM. */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'database-url': { type: 'string' },
      schema: { type: 'string' },
      broker: { type: 'string' },
      'broker-url': { type: 'string' },
      exchange: { type: 'string' },
      batch: { type: 'string', default: String(IDEAL_BATCH) },
      window: { type: 'string', default: '256' },
      'wake-channel': { type: 'string', default: 'outboxer_wakeup' },
    },
  });
  const broker = values.broker;
  if (
    values['database-url'] === undefined ||
    values.schema === undefined ||
    values['broker-url'] === undefined ||
    (broker !== 'rabbitmq' && broker !== 'nats')
  ) {
    throw new Error('usage: ideal-relay --database-url URL --schema S --broker rabbitmq|nats --broker-url URL [--exchange X] [--batch N] [--window N]');
  }
  const relay = await startIdealRelay({
    databaseUrl: values['database-url'],
    schema: values.schema,
    broker,
    brokerUrl: values['broker-url'],
    exchange: values.exchange,
    batch: Number(values.batch),
    window: Number(values.window),
    wakeChannel: values['wake-channel'],
  });
  console.error(JSON.stringify({ msg: 'ideal relay starting', broker, batch: Number(values.batch), window: Number(values.window) }));
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    let code = 0;
    try {
      await relay.stop();
    } catch (error) {
      console.error(JSON.stringify({ msg: 'ideal relay failed', error: error instanceof Error ? error.message : String(error) }));
      code = 1;
    }
    console.error(JSON.stringify({ msg: 'ideal relay stopped', published: relay.published(), failures: relay.failures() }));
    process.exit(relay.failures() > 0 ? 1 : code);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(JSON.stringify({ msg: 'ideal relay failed', error: error instanceof Error ? error.message : String(error) }));
    process.exit(2);
  });
}
