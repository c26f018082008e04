import { resolveMysqlInboxStoreOptions } from '../../src/stores/mysql/inbox/mysql-inbox-store-options.js';
import { resolveSqliteInboxStoreOptions } from '../../src/stores/sqlite/inbox/sqlite-inbox-store-options.js';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { DEFAULT_MAX_PAYLOAD_BYTES, resolveOutboxOptions } from '../../src/core/outbox-options.js';
import { resolveMysqlStoreOptions } from '../../src/stores/mysql/mysql-store-options.js';
import { resolvePostgresStoreOptions } from '../../src/stores/postgres/postgres-store-options.js';
import { resolveSqliteStoreOptions } from '../../src/stores/sqlite/sqlite-store-options.js';

const DAY_MS = 86_400_000;

function refusal(run: () => unknown): ConfigurationError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigurationError) return error;
    throw error;
  }
  throw new Error('expected a ConfigurationError, nothing was thrown');
}

describe('store options', () => {
  it('resolve documented defaults, frozen', () => {
    const postgres = resolvePostgresStoreOptions();
    expect(postgres).toEqual({ tableName: { schema: 'public', table: 'outbox' }, retainPublishedMs: 0, idempotencyWindowMs: DAY_MS, preparedStatements: true });
    const mysql = resolveMysqlStoreOptions();
    expect(mysql).toMatchObject({ retainPublishedMs: 0, idempotencyWindowMs: DAY_MS, partitionCount: 64 });
    expect(mysql.tableNames).toMatchObject({ database: null, table: 'outbox' });
    const sqlite = resolveSqliteStoreOptions();
    expect(sqlite).toMatchObject({ retainPublishedMs: 0, idempotencyWindowMs: DAY_MS, partitionCount: 64 });
    expect(sqlite.tableNames).toMatchObject({ table: 'outbox' });
    for (const resolved of [postgres, mysql, sqlite]) expect(Object.isFrozen(resolved)).toBe(true);
  });

  it('keep what they are given', () => {
    expect(resolvePostgresStoreOptions({ schema: 'ops', table: 'events', retainPublishedMs: 5, idempotencyWindowMs: 7, preparedStatements: false })).toEqual({
      tableName: { schema: 'ops', table: 'events' },
      retainPublishedMs: 5,
      idempotencyWindowMs: 7,
      preparedStatements: false,
    });
    expect(resolveMysqlStoreOptions({ database: 'app', table: 'events', partitionCount: 1024 })).toMatchObject({
      partitionCount: 1024,
      tableNames: { database: 'app' },
    });
    expect(resolveSqliteStoreOptions({ table: 'events', partitionCount: 1 })).toMatchObject({ partitionCount: 1, tableNames: { table: 'events' } });
  });

  it.each<[string, () => unknown, string]>([
    ['postgres', () => resolvePostgresStoreOptions({ retainPublishedMs: -1 }), 'retainPublishedMs'],
    ['postgres', () => resolvePostgresStoreOptions({ idempotencyWindowMs: 0 }), 'idempotencyWindowMs'],
    ['postgres', () => resolvePostgresStoreOptions({ preparedStatements: 'yes' as never }), 'preparedStatements'],
    ['mysql', () => resolveMysqlStoreOptions({ retainPublishedMs: 1.5 }), 'retainPublishedMs'],
    ['mysql', () => resolveMysqlStoreOptions({ partitionCount: 1025 }), 'partitionCount'],
    ['mysql', () => resolveMysqlStoreOptions({ schema: 'x' } as never), 'schema'],
    ['sqlite', () => resolveSqliteStoreOptions({ idempotencyWindowMs: Number.POSITIVE_INFINITY }), 'idempotencyWindowMs'],
    ['sqlite', () => resolveSqliteStoreOptions({ partitionCount: 0 }), 'partitionCount'],
    ['sqlite', () => resolveSqliteStoreOptions({ schema: 'main' } as never), 'schema'],
  ])('%s refuses a bad %s, naming the option', (store, run, option) => {
    const error = refusal(run);
    expect(error.code).toBe('OUTBOXER_INVALID_OPTION');
    expect(error.options).toEqual([option]);
    expect(error.message).toContain(`${store} store option ${option}: `);
  });

  it('report an unknown option before any other fault, listing the known ones', () => {
    const error = refusal(() => resolveSqliteStoreOptions({ partitionCount: 0, tabel: 'x' } as never));
    expect(error.options).toEqual(['tabel']);
    expect(error.message).toBe('sqlite store option tabel: is not an option (known: table, retainPublishedMs, idempotencyWindowMs, partitionCount)');
  });

  it('leave identifiers to their own check and code', () => {
    expect(refusal(() => resolvePostgresStoreOptions({ table: 'outbox; DROP TABLE x' })).code).toBe('OUTBOXER_INVALID_IDENTIFIER');
    expect(refusal(() => resolveMysqlStoreOptions({ database: 'a-b' })).code).toBe('OUTBOXER_INVALID_IDENTIFIER');
    expect(refusal(() => resolveSqliteStoreOptions({ table: '1x' })).code).toBe('OUTBOXER_INVALID_IDENTIFIER');
  });

  it('postgres still ignores options it does not know, as it always has', () => {
    expect(resolvePostgresStoreOptions({ partitionCount: 8 } as never).preparedStatements).toBe(true);
  });
});

describe('outbox options', () => {
  it('resolve documented defaults, frozen', () => {
    const resolved = resolveOutboxOptions();
    expect(resolved.maxPayloadBytes).toBe(DEFAULT_MAX_PAYLOAD_BYTES);
    expect(resolved.commitNotifier).toBeUndefined();
    expect(Object.isFrozen(resolved)).toBe(true);
  });

  it('refuses an unknown option, the removed maxConcurrentHandoffs and an instrumentation without enqueue', () => {
    expect(refusal(() => resolveOutboxOptions({ maxPayload: 1 } as never)).options).toEqual(['maxPayload']);
    const removed = refusal(() => resolveOutboxOptions({ maxConcurrentHandoffs: 4 } as never));
    expect(removed.options).toEqual(['maxConcurrentHandoffs']);
    expect(removed.message).toMatch(/remove it/);
    expect(refusal(() => resolveOutboxOptions({ instrumentation: {} as never })).message).toMatch(/option instrumentation: must have an enqueue/);
  });
});

describe('inbox store options (MariaDB/MySQL, SQLite)', () => {
  it('resolves the documented defaults, frozen', () => {
    expect(resolveMysqlInboxStoreOptions()).toEqual({ database: null, table: 'outbox_inbox' });
    expect(Object.isFrozen(resolveMysqlInboxStoreOptions({ database: 'app' }))).toBe(true);
    expect(resolveSqliteInboxStoreOptions({ table: 'inbox' })).toEqual({ table: 'inbox' });
  });

  it.each([
    [() => resolveMysqlInboxStoreOptions({ tabel: 'x' } as never), 'inbox store option tabel: is not an option (known: database, table)'],
    [() => resolveMysqlInboxStoreOptions({ database: 7 } as never), 'inbox store option database: must be a string: a database name such as app'],
    [() => resolveSqliteInboxStoreOptions({ schema: 'x' } as never), 'inbox store option schema: is not an option (known: table)'],
    [() => resolveSqliteInboxStoreOptions({ table: null } as never), 'inbox store option table: must be a string: an identifier such as outbox_inbox'],
  ])('refuses a bad option with OUTBOXER_INVALID_OPTION naming it (%#)', (resolve, message) => {
    expect(resolve).toThrow(expect.objectContaining({ code: 'OUTBOXER_INVALID_OPTION', message }));
  });
});
