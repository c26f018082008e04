import type mysql from 'mysql2/promise';
import { Outbox, type Publisher, type Relay } from '../../src/index.js';
import { fromMysqlPool, type MysqlPoolConnectionLike } from '../../src/stores/mysql/database.js';
import { MysqlOutboxStore, type MysqlTransaction } from '../../src/stores/mysql/mysql-store.js';
import { asPoolLike, createMysqlDatabase, dropMysqlDatabase, mysqlBulkLoad, mysqlPending, mysqlPool } from '../support/mysql-bench.js';
import { keyOf, MESSAGE_TYPE, payloadOf } from '../support/workload.js';
import { type ContenderOptions, type ContenderWriter, OUTBOXER_ON, type RelayContender } from './contender.js';

const TABLE = 'outbox';

/** A transaction runner over one writer's mysql2 connection, as an application writes one for `outbox.transaction`. */
function onConnection(connection: MysqlPoolConnectionLike) {
  return {
    async transaction<T>(work: (tx: MysqlTransaction) => Promise<T>): Promise<T> {
      await connection.beginTransaction();
      try {
        const result = await work(connection);
        await connection.commit();
        return result;
      } catch (error) {
        await connection.rollback().catch(() => undefined);
        throw error;
      }
    },
  };
}

/**
 * outboxer on MariaDB through its public API: `MysqlOutboxStore` over a mysql2 pool (`fromMysqlPool`), in a
 * database of its own; writers on connections of their own, each transaction through `outbox.transaction` (or, with
 * BENCH_OUTBOXER_PATH=wake, `beginTransaction`, `outbox.enqueue`, `commit`, `notifyCommitted()`); the relay with the
 * library's defaults. The writers' pool is made at setup and its connections open on first use, as (c) does for
 * PostgreSQL.
 */
export function outboxerMysqlContender({ workload, relayConnections }: ContenderOptions): RelayContender {
  let database: string | undefined;
  let relayPool: mysql.Pool | undefined;
  let writerPool: mysql.Pool | undefined;
  let store: MysqlOutboxStore | undefined;
  let outbox: Outbox<MysqlTransaction> | undefined;
  let relay: Relay | undefined;
  const ready = () => {
    if (database === undefined || relayPool === undefined || writerPool === undefined || outbox === undefined)
      throw new Error(`${OUTBOXER_ON.mariadb}: setup() has not run`);
    return { database, relayPool, writerPool, outbox };
  };
  const enqueueAll = async (tx: MysqlTransaction, first: number, count: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let n = first; n < first + count; n++) {
      ids.push(await ready().outbox.enqueue(tx, { topic: workload.topic, type: MESSAGE_TYPE, key: keyOf(n, workload), payload: payloadOf(n, workload) }));
    }
    return ids;
  };
  return {
    name: OUTBOXER_ON.mariadb,
    appName: 'bench-outboxer-mariadb',
    async setup() {
      database = await createMysqlDatabase('bench_outboxer');
      relayPool = mysqlPool(database, relayConnections);
      // (c) runs 32 writers: the pool of an application that has as many
      writerPool = mysqlPool(database, 64);
      store = new MysqlOutboxStore(fromMysqlPool(asPoolLike(relayPool)), { table: TABLE });
      outbox = new Outbox<MysqlTransaction>(store);
      await store.migrate();
    },
    async load(_admin, first, count) {
      await mysqlBulkLoad(ready().relayPool, TABLE, workload, first, count);
    },
    enqueue() {
      return Promise.reject(new Error(`${OUTBOXER_ON.mariadb} writes through writer(), on MariaDB`));
    },
    committed() {
      outbox?.notifyCommitted();
    },
    async writer(): Promise<ContenderWriter> {
      const { writerPool: pool, outbox: box } = ready();
      const connection = (await pool.getConnection()) as unknown as MysqlPoolConnectionLike;
      return {
        async commit(first, count) {
          if (process.env.BENCH_OUTBOXER_PATH !== 'wake') return box.transaction(onConnection(connection), (tx) => enqueueAll(tx, first, count));
          await connection.beginTransaction();
          try {
            const ids = await enqueueAll(connection, first, count);
            await connection.commit();
            box.notifyCommitted();
            return ids;
          } catch (error) {
            await connection.rollback().catch(() => undefined);
            throw error;
          }
        },
        release: () => connection.release(),
      };
    },
    async start(publisher: Publisher) {
      relay = ready().outbox.createRelay(publisher);
      relay.start();
    },
    async stop() {
      await relay?.stop();
      relay = undefined;
    },
    pending() {
      return mysqlPending(ready().relayPool, TABLE);
    },
    async teardown() {
      await relay?.stop();
      await writerPool?.end();
      await relayPool?.end();
      if (database !== undefined) await dropMysqlDatabase(database);
    },
  };
}
