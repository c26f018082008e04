import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import { MAX_TAKE } from '../../src/core/ports.js';
import { fromMysqlPool, type MysqlPoolLike } from '../../src/stores/mysql/database.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { services, uniqueName } from '../support/services.js';
import { freshSqliteFile } from '../support/sqlite-file.js';

/** The code an action fails with (sync or async), or 'none'. */
async function codeOf(action: () => unknown): Promise<string> {
  try {
    await action();
    return 'none';
  } catch (error) {
    return String((error as { code?: unknown }).code);
  }
}

/** A store of each database, migrated, and what autocommits on it (a pool, or a connection outside a transaction). */
interface Database {
  readonly store: {
    pauseTopic(topic: string, reason: string): Promise<boolean>;
    reader: { read(relayId: string, count: number, requests: never[]): Promise<unknown> };
  };
  readonly outbox: Outbox<never>;
  readonly autocommitting: unknown;
  /** Constructs a store of this database with `options`. */
  make(options: Record<string, unknown>): unknown;
  cleanup(): Promise<void>;
}

const opened: Database[] = [];
afterAll(async () => {
  for (const database of opened.splice(0)) await database.cleanup();
});

async function postgres(): Promise<Database> {
  const schema = uniqueName('badin');
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 2 });
  const store = new PostgresOutboxStore(fromPgPool(pool), { schema });
  await store.migrate();
  return {
    store: store as unknown as Database['store'],
    outbox: new Outbox(store) as unknown as Outbox<never>,
    autocommitting: pool,
    make: (options) => new PostgresOutboxStore(fromPgPool(pool), options),
    async cleanup() {
      await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

async function mariadb(): Promise<Database> {
  const fresh = await freshMysqlDatabase('badin');
  const store = new MysqlOutboxStore(fresh.database);
  await store.migrate();
  const connection = await fresh.pool.getConnection();
  return {
    store: store as unknown as Database['store'],
    outbox: new Outbox(store) as unknown as Outbox<never>,
    autocommitting: connection,
    make: (options) => new MysqlOutboxStore(fromMysqlPool(fresh.pool as unknown as MysqlPoolLike), options),
    async cleanup() {
      connection.release();
      await fresh.cleanup();
    },
  };
}

async function sqlite(): Promise<Database> {
  const file = freshSqliteFile('badin');
  const store = new SqliteOutboxStore(file.database());
  await store.migrate();
  return {
    store: store as unknown as Database['store'],
    outbox: new Outbox(store) as unknown as Outbox<never>,
    autocommitting: file.connect(),
    make: (options) => new SqliteOutboxStore(file.database(), options),
    cleanup: () => file.cleanup(),
  };
}

describe.each([
  ['PostgreSQL', postgres],
  ['MariaDB', mariadb],
  ['SQLite', sqlite],
])('bad input on %s gets the same typed errors', (_name, open) => {
  it('refuses bad options, names, messages, pauses and reads with the codes PostgreSQL gives', async () => {
    const database = await open();
    opened.push(database);
    expect(await codeOf(() => database.make({ retainPublishedMs: -1 }))).toBe('OUTBOXER_INVALID_OPTION');
    expect(await codeOf(() => database.make({ idempotencyWindowMs: 0 }))).toBe('OUTBOXER_INVALID_OPTION');
    expect(await codeOf(() => database.make({ table: 'outbox; DROP TABLE x' }))).toBe('OUTBOXER_INVALID_IDENTIFIER');
    expect(await codeOf(() => database.outbox.enqueue(database.autocommitting as never, { topic: 't', type: 'x', payload: {} }))).toBe(
      'OUTBOXER_NOT_IN_TRANSACTION',
    );
    expect(await codeOf(() => database.store.pauseTopic('', 'why'))).toBe('OUTBOXER_INVALID_TOPIC');
    expect(await codeOf(() => database.store.pauseTopic('orders', 'line\nbreak'))).toBe('OUTBOXER_INVALID_OPTION');
    const badRead = [{ partition: 99, epoch: '1', after: null, recheck: null, limit: 10 }] as never[];
    expect(await codeOf(() => database.store.reader.read('00000000-0000-4000-8000-000000000000', 64, badRead))).toBe('OUTBOXER_INVALID_OPTION');
    // a store's statements are planned for at most MAX_TAKE rows per branch: a larger take is refused, not cut short
    const tooMany = [{ partition: 1, epoch: '1', after: null, recheck: null, limit: MAX_TAKE + 1 }] as never[];
    expect(await codeOf(() => database.store.reader.read('00000000-0000-4000-8000-000000000000', 64, tooMany))).toBe('OUTBOXER_INVALID_OPTION');
  });
});
