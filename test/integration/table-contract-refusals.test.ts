import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { MessageValidationError } from '../../src/core/errors.js';
import type { OutboxMessageInput } from '../../src/core/message.js';
import { MessageRules } from '../../src/core/message-rules.js';
import { validateMessage } from '../../src/core/validate-message.js';
import { applyMysqlMigrations } from '../../src/stores/mysql/migration-runner.js';
import { mysqlMigrations } from '../../src/stores/mysql/migrations.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { mysqlTableNames } from '../../src/stores/mysql/table-names.js';
import { applyMigrations } from '../../src/stores/postgres/migration-runner.js';
import { migrations } from '../../src/stores/postgres/migrations.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { resolveTableName } from '../../src/stores/postgres/sql.js';
import { applySqliteMigrations } from '../../src/stores/sqlite/migration-runner.js';
import { sqliteMigrations } from '../../src/stores/sqlite/migrations.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { pgliteSchema, postgresSchema, type SchemaDatabase } from '../support/schema-databases.js';
import { freshSqliteFile } from '../support/sqlite-file.js';

/** A row as a plain-SQL producer writes it: headers as JSON text. */
interface Row {
  readonly topic: string;
  readonly type: string;
  readonly key?: string | null;
  readonly headers?: string;
}

/** An outbox table of one database, written by plain SQL. */
interface ContractTable {
  insert(row: Row): Promise<void>;
  /** `UPDATE … SET <column> = value` on every row, as an operator correcting rows by hand. */
  update(column: 'topic' | 'headers', value: string): Promise<void>;
  /** Parks every row dead, as a relay does: an update of columns the contract does not cover. */
  park(): Promise<void>;
  rowCount(): Promise<number>;
  /** Applies the migrations still missing (the table contract among them). */
  migrate(): Promise<void>;
  cleanup(): Promise<void>;
}

interface ContractDatabase {
  readonly name: string;
  /** A fresh table, migrated fully or only up to the last version before the table contract. */
  open(stage: 'latest' | 'before-contract'): Promise<ContractTable>;
  /** The database's refusal of what the library words `words` (its message after `message <id>: `). */
  refusal(words: string): string | RegExp;
  /** Refusals worded by the column's type before any check runs, by case. */
  readonly columnRefusals?: Readonly<Record<string, RegExp>>;
}

const plain = (sql: (text: string, params?: unknown[]) => Promise<unknown>, table: string, param: (i: number) => string, key = 'key') => ({
  insert: (row: Row) =>
    sql(`INSERT INTO ${table} (topic, type, ${key}, payload, headers) VALUES (${[1, 2, 3, 4, 5].map(param).join(', ')})`, [
      row.topic,
      row.type,
      row.key ?? null,
      '{}',
      row.headers ?? '{}',
    ]).then(() => undefined),
  update: (column: 'topic' | 'headers', value: string) => sql(`UPDATE ${table} SET ${column} = ${param(1)}`, [value]).then(() => undefined),
  park: () => sql(`UPDATE ${table} SET state = 'dead', last_error = 'parked'`).then(() => undefined),
  rowCount: async () => Number(((await sql(`SELECT count(*) AS n FROM ${table}`)) as { n: unknown }[])[0]?.n),
});

function postgres(name: string, open: (prefix: string) => Promise<SchemaDatabase>): ContractDatabase {
  return {
    name,
    async open(stage) {
      const db = await open('contract');
      const store = new PostgresOutboxStore(db.database, { schema: db.schema });
      if (stage === 'latest') await store.migrate();
      else
        await applyMigrations(
          db.database,
          resolveTableName(db.schema, 'outbox'),
          migrations.filter((m) => m.version < 10),
        );
      const sql = (text: string, params?: unknown[]) =>
        db.sql(text.replace(/VALUES \(\$1, \$2, \$3, \$4, \$5\)/, 'VALUES ($1, $2, $3, $4, $5::jsonb)'), params);
      return { ...plain(sql, `"${db.schema}".outbox`, (i) => `$${i}`), migrate: () => store.migrate(), cleanup: db.cleanup };
    },
    refusal: (words) => `outbox ${words}`,
  };
}

const mariadb: ContractDatabase = {
  name: 'MariaDB',
  async open(stage) {
    const fresh = await freshMysqlDatabase('contract');
    const store = new MysqlOutboxStore(fresh.database, { partitionCount: 4 });
    const names = mysqlTableNames('outbox');
    const before = mysqlMigrations.filter((m) => m.version < 2).map((m) => ({ ...m, statements: m.statements(names, { partitionCount: 4 }) }));
    await (stage === 'latest' ? store.migrate() : applyMysqlMigrations(fresh.database, names, 'outbox', before));
    return { ...plain(fresh.sql, 'outbox', () => '?', '`key`'), migrate: () => store.migrate(), cleanup: fresh.cleanup };
  },
  refusal: (words) => `outbox ${words}`,
  // topic is VARCHAR(255): a longer one never reaches the trigger (in strict mode, the servers' default).
  columnRefusals: { 'a topic over 255 bytes': /Data too long for column 'topic'/ },
};

const sqlite: ContractDatabase = {
  name: 'SQLite',
  async open(stage) {
    const file = freshSqliteFile('contract');
    const database = file.database();
    const store = new SqliteOutboxStore(database, { partitionCount: 4 });
    const before = sqliteMigrations.filter((m) => m.version < 2).map((m) => ({ ...m, sql: m.sql(store.tableNames, { partitionCount: 4 }) }));
    await (stage === 'latest' ? store.migrate() : applySqliteMigrations(database, store.tableNames, 'outbox', before));
    const writer = file.connect();
    const sql = async (text: string, params: unknown[] = []) =>
      text.startsWith('SELECT') ? writer.prepare(text).all(...params) : writer.prepare(text).run(...params);
    return { ...plain(sql, 'outbox', () => '?', '"key"'), migrate: () => store.migrate(), cleanup: file.cleanup };
  },
  // RAISE takes a literal in SQLite: the same words, without the value at fault (the traceparent rule names its header).
  refusal: (words) =>
    `outbox ${words.startsWith('header "traceparent" is invalid: a traceparent') ? words : words.replace(/ "(?:[^"\\]|\\.)*"/, '').replace(/ \(\d+\)/, '')}`,
};

const ID = '018f3c1e-7b2a-7cde-8f01-23456789abcd';
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const manyHeaders = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`h${i}`, 'v']));

/** Messages the library refuses at enqueue, each breaking one rule; the table must refuse each row in the same words. */
const refused: readonly [string, Partial<OutboxMessageInput>][] = [
  ['a wildcard topic', { topic: 'orders.#' }],
  ['a topic with an empty part', { topic: 'orders..t' }],
  ['a topic with a space', { topic: 'orders t' }],
  ['a topic ending in a line feed', { topic: 'orders\n' }],
  ['a topic over 255 bytes', { topic: 't'.repeat(256) }],
  ['a type with a control character', { type: 'order\tcreated' }],
  ['a type over 255 bytes', { type: 'é'.repeat(128) }],
  ['a key with a line break', { key: 'order-7\n' }],
  ['an empty key', { key: '' }],
  ['a header name with a space', { headers: { 'x tenant': 'acme' } }],
  ['a header name of 200 characters', { headers: { ['n'.repeat(200)]: 'v' } }],
  ['a header name starting with a dash', { headers: { '-x': 'v' } }],
  ['a header name ending in a line feed', { headers: { 'tenant\n': 'acme' } }],
  ['a header value with CR/LF', { headers: { tenant: 'acme\r\nX-Injected: 1' } }],
  ['a header value of 5000 bytes', { headers: { tenant: 'x'.repeat(5000) } }],
  ['a malformed traceparent', { headers: { traceparent: 'not-a-trace' } }],
  ['a traceparent in uppercase hex', { headers: { traceparent: TRACEPARENT.toUpperCase() } }],
  ['a traceparent ending in a line feed', { headers: { traceparent: `${TRACEPARENT}\n` } }],
  ['a traceparent with an all-zero trace id', { headers: { traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` } }],
  ['65 headers', { headers: manyHeaders(65) }],
];

/** The library's refusal of `input` after `message <id>: `, and the row a SQL producer would write. */
function libraryCase(input: Partial<OutboxMessageInput>): { words: string; row: Row } {
  const message = { id: ID, topic: 'orders.created', type: 'order.created', payload: {}, ...input };
  let words: string | undefined;
  try {
    validateMessage(message as OutboxMessageInput, { maxPayloadBytes: 1024 });
  } catch (error) {
    expect(error).toBeInstanceOf(MessageValidationError);
    words = (error as Error).message.replace(`message ${ID}: `, '');
  }
  if (words === undefined) throw new Error('the library accepts this message');
  return { words, row: { topic: message.topic, type: message.type, key: message.key ?? null, headers: JSON.stringify(message.headers ?? {}) } };
}

const databases = [postgres('PostgreSQL (pg)', postgresSchema), postgres('PGlite (embedded)', pgliteSchema), mariadb, sqlite];

describe.each(databases.map((db) => [db.name, db] as const))('the table contract at INSERT on %s', (_name, db) => {
  let table: ContractTable | undefined;
  afterEach(async () => {
    await table?.cleanup();
    table = undefined;
  });

  it.each(refused)("refuses %s in the library's words", async (label, input) => {
    table = await db.open('latest');
    const { words, row } = libraryCase(input);
    await expect(table.insert(row)).rejects.toThrow(db.columnRefusals?.[label] ?? db.refusal(words));
    expect(await table.rowCount()).toBe(0);
  });

  it('accepts what the library accepts, at every bound', async () => {
    table = await db.open('latest');
    const rows: Row[] = [
      {
        topic: 'a:b/c-d_e.f',
        type: 'order.created',
        key: 'ключ-7',
        headers: JSON.stringify({ traceparent: TRACEPARENT, 'correlation-id': 'c-1', Tenant: 'acme' }),
      },
      { topic: 't'.repeat(255), type: 'é'.repeat(127), key: 'k'.repeat(512), headers: JSON.stringify(manyHeaders(64)) },
      { topic: 'orders', type: 'x', headers: JSON.stringify({ ['n'.repeat(128)]: 'é'.repeat(2048), 'x.y_z-1': '' }) },
    ];
    for (const row of rows) {
      expect(() =>
        validateMessage(
          { ...row, key: row.key ?? undefined, headers: JSON.parse(row.headers ?? '{}') as Record<string, string>, payload: {} },
          { maxPayloadBytes: 1024 },
        ),
      ).not.toThrow();
      await table.insert(row);
    }
    expect(await table.rowCount()).toBe(rows.length);
  });

  it('refuses an UPDATE that breaks a rule, and lets updates of other columns through', async () => {
    table = await db.open('latest');
    await table.insert({ topic: 'orders.created', type: 'order.created', headers: '{"tenant": "acme"}' });
    await expect(table.update('topic', 'orders.*')).rejects.toThrow(db.refusal(libraryCase({ topic: 'orders.*' }).words));
    await expect(table.update('headers', '{"x tenant": "acme"}')).rejects.toThrow(db.refusal(libraryCase({ headers: { 'x tenant': 'acme' } }).words));
    await table.park();
  });

  it('migrates a table holding rows that break the rules: they stay, a relay can still park them, new ones are refused', async () => {
    table = await db.open('before-contract');
    const legacy = refused.filter(([label]) => /wildcard|header name with a space|5000 bytes|malformed traceparent/.test(label));
    for (const [, input] of legacy) await table.insert(libraryCase(input).row);
    await table.migrate();
    expect(await table.rowCount()).toBe(legacy.length);
    await table.park();
    await expect(table.insert(libraryCase({ topic: 'orders.#' }).row)).rejects.toThrow(db.refusal(libraryCase({ topic: 'orders.#' }).words));
  });
});

describe('docs/table.md', () => {
  it('states every rule of the table contract in the words the library and the tables use', () => {
    const doc = readFileSync(new URL('../../docs/table.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    for (const rule of Object.values(MessageRules)) expect(doc).toContain(rule);
  });
});
