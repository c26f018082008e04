import { readFileSync } from 'node:fs';
import mysql from 'mysql2/promise';
import { afterEach, describe, expect, it } from 'vitest';
import type { PartitionMessage, PartitionReader } from '../../src/core/ports.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshMysqlDatabase, type FreshMysqlDatabase } from '../support/mysql-database.js';
import { readFromStart } from '../support/partition-relay-fixture.js';
import { freshSqliteFile, type FreshSqliteFile } from '../support/sqlite-file.js';

/** The SQL block after `<!-- tested by test/integration/table-contract-dialects.test.ts: <what> -->` in docs/table.md, as a reader copies it. */
function documented(what: string): string {
  const doc = readFileSync(new URL('../../docs/table.md', import.meta.url), 'utf8');
  const marker = `<!-- tested by test/integration/table-contract-dialects.test.ts: ${what} -->\n\`\`\`sql\n`;
  const start = doc.indexOf(marker);
  if (start < 0) throw new Error(`docs/table.md has no block marked "${what}"`);
  const from = start + marker.length;
  return doc.slice(from, doc.indexOf('```', from));
}

const bodyOf = (m: PartitionMessage) => (typeof m.body === 'string' ? m.body : Buffer.from(m.body).toString('hex'));

/** What a relay would publish now, and the scheduled rows it holds back (read from every partition). */
async function relayed(reader: PartitionReader, partitionCount: number) {
  return readFromStart(reader, partitionCount);
}

describe('the MariaDB SQL of docs/table.md, on real MariaDB', () => {
  let fresh: FreshMysqlDatabase | undefined;
  afterEach(async () => {
    await fresh?.cleanup();
    fresh = undefined;
  });

  async function migrated() {
    fresh = await freshMysqlDatabase('doc_sql');
    const store = new MysqlOutboxStore(fresh.database, { partitionCount: 8 });
    await store.migrate();
    const session = await mysql.createConnection({ uri: fresh.url, multipleStatements: true });
    return { store, session };
  }

  it('relays the documented inserts with their bodies as written; the delayed one waits', async () => {
    const { store, session } = await migrated();
    try {
      await session.query(documented('MariaDB inserts'));
    } finally {
      await session.end();
    }
    const messages = await relayed(store.reader, 8);
    expect(messages.map((m) => [m.key, m.contentType, m.headers, bodyOf(m)])).toEqual([
      [null, 'application/json', {}, '{"id": 7}'],
      ['order-7', 'application/json', { tenant: 'acme' }, '{"id": 7}'],
      [null, 'application/x-protobuf', {}, '0a03666f6f'],
    ]);
    expect((await store.stats()).scheduled).toBe(1);
  });

  it('runs the trigger recipe with the session variable set and unset; refuses a non-string header', async () => {
    const { store, session } = await migrated();
    try {
      await session.query('CREATE TABLE orders (id INT PRIMARY KEY, total DECIMAL(10,2) NOT NULL)');
      await session.query(documented('MariaDB trigger'));
      await session.query('INSERT INTO orders VALUES (1, 9.90)');
      await session.query(`SET @app_tenant = 'acme'; INSERT INTO orders VALUES (2, 5)`);
      await expect(session.query(`INSERT INTO outbox (topic, type, payload, headers) VALUES ('t', 'x', '{}', '{"retry": 3}')`)).rejects.toThrow(
        /outbox_headers_object_of_strings/,
      );
    } finally {
      await session.end();
    }
    expect((await relayed(store.reader, 8)).map((m) => [m.key, m.headers, m.body])).toEqual([
      ['order-1', { tenant: 'none' }, '{"orderId": 1, "total": "9.90"}'],
      ['order-2', { tenant: 'acme' }, '{"orderId": 2, "total": "5.00"}'],
    ]);
  });
});

describe('the SQLite SQL of docs/table.md, on a real SQLite file', () => {
  let file: FreshSqliteFile | undefined;
  afterEach(async () => {
    await file?.cleanup();
    file = undefined;
  });

  async function migrated() {
    file = freshSqliteFile('doc_sql');
    const store = new SqliteOutboxStore(file.database(), { partitionCount: 8 });
    await store.migrate();
    return { store, writer: file.connect() };
  }

  it('relays the documented inserts with their bodies as written; the delayed one waits', async () => {
    const { store, writer } = await migrated();
    writer.exec(documented('SQLite inserts'));
    const messages = await relayed(store.reader, 8);
    expect(messages.map((m) => [m.key, m.contentType, m.headers, bodyOf(m)])).toEqual([
      [null, 'application/json', {}, '{"id": 7}'],
      ['order-7', 'application/json', { tenant: 'acme' }, '{"id": 7}'],
      [null, 'application/x-protobuf', {}, '0a03666f6f'],
    ]);
    expect((await store.stats()).scheduled).toBe(1);
  });

  it('runs the trigger recipe; refuses a non-string header', async () => {
    const { store, writer } = await migrated();
    writer.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, total TEXT NOT NULL)');
    writer.exec(documented('SQLite trigger'));
    writer.exec(`INSERT INTO orders VALUES (1, '9.90')`);
    expect(() => writer.exec(`INSERT INTO outbox (topic, type, payload, headers) VALUES ('t', 'x', '{}', '{"retry": 3}')`)).toThrow(
      'outbox headers must be a JSON object of string values',
    );
    expect((await relayed(store.reader, 8)).map((m) => [m.key, m.headers, m.body])).toEqual([['order-1', {}, '{"orderId":1,"total":"9.90"}']]);
  });
});
