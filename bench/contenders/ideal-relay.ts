import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { JSON_CONTENT_TYPE } from '../../src/core/message.js';
import { type IdealBroker, natsBroker, rabbitMqBroker, Window } from './ideal-relay-brokers.js';
import { type IdealRow, openIdealTable } from './ideal-relay-tables.js';

/**
 * The ideal unordered relay of issue 23, the floor of what any relay must spend: one connection reads the next
 * `batch` rows by seq (`seq > last read`) while the previous batch publishes, every row goes out through the
 * broker's own client (amqplib confirm channel, `mandatory`; @nats-io/jetstream publish awaiting the PubAck) with
 * the relay's wire form, at most `window` unconfirmed across batches (oldest batch first), and each batch, once
 * all of it is confirmed, is deleted with one statement (PostgreSQL `DELETE ... WHERE seq = ANY($1)`, MariaDB and
 * SQLite `DELETE ... WHERE seq IN (...)`). No leases, no key order, no fencing, no retry (a failed publish stops
 * it: the bench checks that none failed). Its table has the primary key and nothing else
 * (ideal-relay-tables.ts). It runs as a process of its own (`node <build>/bench/contenders/ideal-relay.js ...`,
 * transpiled with the CLI by `buildCli`, see relay-floor.ts) so that its CPU can be read from /proc like the CLI
 * relay's. The database URL picks the database: `postgres://` (with `--schema`), `mysql://`, `sqlite:<file>`.
 */

export const IDEAL_READY = '"msg":"ideal relay starting"';
export const IDEAL_BATCH = 1_000;
/** Its modules, as `buildCli().add` transpiles them beside the CLI (the entry point first). */
export const IDEAL_RELAY_FILES = ['bench/contenders/ideal-relay.ts', 'bench/contenders/ideal-relay-brokers.ts', 'bench/contenders/ideal-relay-tables.ts'];

export interface IdealRelayOptions {
  readonly databaseUrl: string;
  /** PostgreSQL only: the table's schema. */
  readonly schema?: string | undefined;
  readonly broker: 'rabbitmq' | 'nats';
  readonly brokerUrl: string;
  /** RabbitMQ exchange. */
  readonly exchange?: string | undefined;
  readonly batch: number;
  readonly window: number;
  /** PostgreSQL: LISTENed to, a notification wakes an idle relay at once. It polls every 250 ms otherwise. */
  readonly wakeChannel: string;
}

export interface IdealRelay {
  readonly published: () => number;
  readonly failures: () => number;
  stop(): Promise<void>;
}

export async function startIdealRelay(options: IdealRelayOptions): Promise<IdealRelay> {
  const table = await openIdealTable(options.databaseUrl, options.schema, options.batch);
  const broker: IdealBroker =
    options.broker === 'rabbitmq' ? await rabbitMqBroker(options.brokerUrl, options.exchange ?? '') : await natsBroker(options.brokerUrl);
  const window = new Window(options.window);
  let published = 0;
  let failures = 0;
  let stopping = false;
  let wake: (() => void) | undefined;
  await table.listen(options.wakeChannel, () => wake?.());

  const publishBatch = async (rows: IdealRow[]): Promise<void> => {
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
            createdAt: row.createdAt,
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
    await table.remove(rows.map((row) => row.seq));
  };

  const loop = async (): Promise<void> => {
    let after = '0';
    // The batch publishing and the one read behind it: a third is read only once the oldest is deleted.
    const batches: Promise<void>[] = [];
    while (!stopping) {
      if (batches.length >= 2) await batches.shift();
      const rows = await table.read(after);
      if (rows.length > 0) {
        after = (rows[rows.length - 1] as IdealRow).seq;
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
        await table.close();
      }
    },
  };
}

const USAGE = 'usage: ideal-relay --database-url URL [--schema S] --broker rabbitmq|nats --broker-url URL [--exchange X] [--batch N] [--window N]';

/** `node ideal-relay.js --database-url … [--schema …] --broker rabbitmq|nats --broker-url … [--exchange …]`: runs until SIGTERM. */
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
  const batch = Number(values.batch);
  if (values['database-url'] === undefined || values['broker-url'] === undefined || (broker !== 'rabbitmq' && broker !== 'nats') || !Number.isInteger(batch)) {
    throw new Error(USAGE);
  }
  const relay = await startIdealRelay({
    databaseUrl: values['database-url'],
    schema: values.schema,
    broker,
    brokerUrl: values['broker-url'],
    exchange: values.exchange,
    batch,
    window: Number(values.window),
    wakeChannel: values['wake-channel'],
  });
  console.error(JSON.stringify({ msg: 'ideal relay starting', broker, batch, window: Number(values.window) }));
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
