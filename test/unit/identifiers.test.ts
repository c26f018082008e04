import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { quoteIdentifier, validateIdentifier } from '../../src/core/identifiers.js';
import type { PgDatabase } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { services, uniqueName } from '../support/services.js';
import { seeded } from '../support/seeded-random.js';

/** Random strings biased towards the characters that break quoting: quotes, backslashes, dots, spaces. */
function randomName(random: () => number, maxLength: number): string {
  const alphabet = ['"', '"', '""', '\\', '.', ' ', ';', '-', "'", '`', 'a', 'Z', '_', '0', 'é', '\t', '$'];
  const length = 1 + Math.floor(random() * maxLength);
  let name = '';
  while (name.length < length) name += alphabet[Math.floor(random() * alphabet.length)] ?? '';
  return name;
}

function expectInvalid(value: string, maxBytes?: number): void {
  try {
    validateIdentifier(value, 'schema', maxBytes);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).code).toBe('OUTBOXER_INVALID_IDENTIFIER');
    expect((error as ConfigurationError).message).toContain('schema');
    return;
  }
  throw new Error(`validateIdentifier accepted ${JSON.stringify(value)}`);
}

const VALID = ['outbox', 'Outbox', 'OUTBOX_2', '_private', 'a', 'select', 'user', 'order', 'x'.repeat(63), 'Mixed_Case_9'];

/** Known injection payloads and near-misses (failure catalogue, Part 3 §1). */
const PAYLOADS = [
  'web".session WHERE $1=$1;--',
  'x"; DROP TABLE y;--',
  '"abc"',
  '"',
  '""',
  'a"b',
  "a'b",
  'a\\"b',
  'a\\b',
  'public.outbox',
  'out box',
  'out\tbox',
  'out\nbox',
  'outbox\n',
  'out\rbox',
  'out\0box',
  'out`box',
  'out-box',
  'out$box',
  'out;box',
  'оutbox', // Cyrillic о
  'outbοx', // Greek ο
  'ｏｕｔｂｏｘ', // full-width
  'outbox\u200b', // zero-width space
  'é',
  '',
  ' ',
  '1outbox',
  '9',
  'x'.repeat(64),
  'search_path TO evil, public',
];

describe('validateIdentifier', () => {
  it.each(VALID)('accepts %j and returns it unchanged', (name) => {
    expect(validateIdentifier(name, 'schema')).toBe(name);
  });

  it.each(PAYLOADS)('refuses %j', (name) => {
    expectInvalid(name);
  });

  it('applies a custom byte limit', () => {
    expect(validateIdentifier('a'.repeat(40), 'table', 40)).toBe('a'.repeat(40));
    expectInvalid('a'.repeat(41), 40);
  });

  it('refuses every seeded random name that strays outside [A-Za-z0-9_]', () => {
    const random = seeded(0x5eed);
    for (let i = 0; i < 2000; i++) {
      const name = randomName(random, 20);
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) continue;
      expectInvalid(name);
    }
  });
});

describe('quoteIdentifier', () => {
  it('doubles inner quotes and wraps the name', () => {
    expect(quoteIdentifier('outbox')).toBe('"outbox"');
    expect(quoteIdentifier('a"b')).toBe('"a""b"');
    expect(quoteIdentifier('"abc"')).toBe('"""abc"""');
    expect(quoteIdentifier('a\\b')).toBe('"a\\b"');
  });

  it('is injective over seeded random names, quotes included', () => {
    const random = seeded(42);
    const byQuoted = new Map<string, string>();
    for (let i = 0; i < 20_000; i++) {
      const name = randomName(random, 12);
      const quoted = quoteIdentifier(name);
      const earlier = byQuoted.get(quoted);
      if (earlier !== undefined) expect(earlier).toBe(name);
      byQuoted.set(quoted, name);
      // Unquoting (strip the outer quotes, halve the inner pairs) gives the name back.
      expect(quoted.startsWith('"') && quoted.endsWith('"')).toBe(true);
      expect(quoted.slice(1, -1).replaceAll('""', '"')).toBe(name);
      expect(quoted.slice(1, -1).replaceAll('""', '')).not.toContain('"'); // no lone quote can end the name early
    }
    expect(byQuoted.size).toBeGreaterThan(10_000);
  });
});

describe('quoted identifiers round-trip through PostgreSQL', () => {
  const schema = `Ident_${uniqueName('u')}`;
  const client = new pg.Client({ connectionString: services.postgresUrl });

  beforeAll(async () => {
    await client.connect();
    await client.query(`CREATE SCHEMA ${quoteIdentifier(validateIdentifier(schema, 'schema'))}`);
  });

  afterAll(async () => {
    await client.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(schema)} CASCADE`);
    await client.end();
  });

  async function tablesOf(): Promise<string[]> {
    const result = await client.query<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name', [
      schema,
    ]);
    return result.rows.map((row) => row.table_name);
  }

  it('keeps the schema name exactly (mixed case included)', async () => {
    const result = await client.query('SELECT schema_name FROM information_schema.schemata WHERE schema_name = $1', [schema]);
    expect(result.rows).toEqual([{ schema_name: schema }]);
  });

  it('creates and reads back every valid identifier unchanged', async () => {
    for (const name of VALID) {
      await client.query(`CREATE TABLE ${quoteIdentifier(schema)}.${quoteIdentifier(validateIdentifier(name, 'table'))} (${quoteIdentifier(name)} int)`);
    }
    const tables = await tablesOf();
    for (const name of VALID) expect(tables).toContain(name);
    const columns = await client.query<{ column_name: string; table_name: string }>(
      'SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1',
      [schema],
    );
    for (const name of VALID) expect(columns.rows).toContainEqual({ table_name: name, column_name: name });
  });

  it('round-trips seeded random names, so quoting is a true escape and not a pass-through', async () => {
    const random = seeded(7);
    const names = new Set<string>(['x"; DROP TABLE y;--', 'web".session WHERE $1=$1;--', '"abc"', '"', 'a\\"b']);
    while (names.size < 60) {
      const name = randomName(random, 20);
      if (Buffer.byteLength(name) <= 63) names.add(name);
    }
    await client.query(`CREATE SCHEMA ${quoteIdentifier(`${schema}_r`)}`);
    try {
      for (const name of names) await client.query(`CREATE TABLE ${quoteIdentifier(`${schema}_r`)}.${quoteIdentifier(name)} ()`);
      const result = await client.query<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [`${schema}_r`]);
      expect(result.rows.map((row) => row.table_name).sort()).toEqual([...names].sort());
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(`${schema}_r`)} CASCADE`);
    }
  });
});

describe('PostgresOutboxStore only takes validated names', () => {
  const queries: string[] = [];
  const database = {
    query: async (text: string) => {
      queries.push(text);
      return { rows: [] };
    },
    transaction: async () => {
      throw new Error('no transaction expected');
    },
    close: async () => undefined,
  } as unknown as PgDatabase;

  function storeError(options: { schema?: string; table?: string }): ConfigurationError {
    try {
      new PostgresOutboxStore(database, options);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigurationError);
      return error as ConfigurationError;
    }
    throw new Error(`the store accepted ${JSON.stringify(options)}`);
  }

  it.each(PAYLOADS)('refuses the schema %j', (schemaName) => {
    expect(storeError({ schema: schemaName }).code).toBe('OUTBOXER_INVALID_IDENTIFIER');
  });

  it.each(PAYLOADS)('refuses the table %j', (table) => {
    expect(storeError({ table }).code).toBe('OUTBOXER_INVALID_IDENTIFIER');
  });

  it('refuses table names over 40 bytes and accepts 40', () => {
    expect(storeError({ table: 't'.repeat(41) }).code).toBe('OUTBOXER_INVALID_IDENTIFIER');
    expect(new PostgresOutboxStore(database, { table: 't'.repeat(40) }).tableName).toEqual({ schema: 'public', table: 't'.repeat(40) });
  });

  it('accepts a 63-byte schema and keeps valid names as given', () => {
    const store = new PostgresOutboxStore(database, { schema: 'S'.repeat(63), table: 'Outbox_1' });
    expect(store.tableName).toEqual({ schema: 'S'.repeat(63), table: 'Outbox_1' });
    expect(store.migrationSql()).toContain(`"${'S'.repeat(63)}"."Outbox_1"`);
  });

  it('does no I/O while refusing', () => {
    expect(queries).toEqual([]);
  });
});
