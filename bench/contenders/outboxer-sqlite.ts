import type Database from 'better-sqlite3';
import { Outbox, type Publisher, type Relay } from '../../src/index.js';
import type { SqliteDatabase, SqliteHandle } from '../../src/stores/sqlite/database.js';
import { fromBetterSqlite3 } from '../../src/stores/sqlite/open-sqlite.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { benchSqliteFile, sqliteBulkLoad, sqlitePending } from '../support/sqlite-bench.js';
import { keyOf, MESSAGE_TYPE, payloadOf } from '../support/workload.js';
import { type ContenderOptions, type ContenderWriter, OUTBOXER_ON, type RelayContender } from './contender.js';

const TABLE = 'outbox';

/**
 * outboxer on SQLite through its public API: `SqliteOutboxStore` on a file of its own, over one better-sqlite3
 * connection (`fromBetterSqlite3`). Writers run their transactions on the store's connection, the first way the
 * SQLite store documents: `outbox.transaction(store.database, async (tx) => outbox.enqueue(tx, …))` (a serialized
 * `BEGIN IMMEDIATE`); with BENCH_OUTBOXER_PATH=wake, `store.database.transaction` then `notifyCommitted()`. With
 * BENCH_SQLITE_WRITERS=own they share a second connection of their own instead (the second documented way),
 * whose writes then wait on the relay's (and the relay's on theirs) through SQLite's file lock. One connection
 * serves all writers either way: `writerConnections` is the number of writers in flight, not of connections.
 */
export function outboxerSqliteContender({ workload }: ContenderOptions): RelayContender {
  const file = benchSqliteFile('outboxer-bench');
  const opened: Database.Database[] = [];
  const open = (): SqliteDatabase => {
    const handle = file.open();
    opened.push(handle);
    return fromBetterSqlite3(handle);
  };
  const store = new SqliteOutboxStore(open(), { table: TABLE });
  const outbox = new Outbox<SqliteHandle>(store);
  let writers: SqliteDatabase | undefined;
  let loader: Database.Database | undefined;
  // bulk loads and counts, on a connection of their own (the PostgreSQL contenders' admin client)
  const admin = (): Database.Database => {
    if (loader === undefined) {
      loader = file.open();
      opened.push(loader);
    }
    return loader;
  };
  let relay: Relay | undefined;
  const enqueueAll = async (tx: SqliteHandle, first: number, count: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let n = first; n < first + count; n++) {
      ids.push(await outbox.enqueue(tx, { topic: workload.topic, type: MESSAGE_TYPE, key: keyOf(n, workload), payload: payloadOf(n, workload) }));
    }
    return ids;
  };
  return {
    name: OUTBOXER_ON.sqlite,
    appName: 'bench-outboxer-sqlite',
    async setup() {
      await store.migrate();
    },
    async load(_admin, first, count) {
      sqliteBulkLoad(admin(), TABLE, workload, first, count);
    },
    enqueue() {
      return Promise.reject(new Error(`${OUTBOXER_ON.sqlite} writes through writer(), on SQLite`));
    },
    committed() {
      outbox.notifyCommitted();
    },
    async writer(): Promise<ContenderWriter> {
      const database = process.env.BENCH_SQLITE_WRITERS === 'own' ? (writers ??= open()) : store.database;
      return {
        async commit(first, count) {
          // better-sqlite3 never waits for I/O, so a closed loop of writers would run on microtasks alone and the
          // relay's timers and sockets would never get a turn; an application's transactions start from I/O events
          await new Promise((resolve) => setImmediate(resolve));
          if (process.env.BENCH_OUTBOXER_PATH !== 'wake') return outbox.transaction(database, (tx) => enqueueAll(tx, first, count));
          const ids = await database.transaction((tx) => enqueueAll(tx, first, count));
          outbox.notifyCommitted();
          return ids;
        },
        release: () => undefined,
      };
    },
    async start(publisher: Publisher) {
      relay = outbox.createRelay(publisher);
      relay.start();
    },
    async stop() {
      await relay?.stop();
      relay = undefined;
    },
    async pending() {
      return sqlitePending(admin(), TABLE);
    },
    async teardown() {
      await relay?.stop();
      await writers?.close();
      await store.close();
      for (const handle of opened) if (handle.open) handle.close();
      file.remove();
    },
  };
}
