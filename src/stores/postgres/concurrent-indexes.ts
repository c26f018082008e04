import { setTimeout as sleep } from 'node:timers/promises';
import { quoteIdentifier } from '../../core/identifiers.js';
import type { PgDatabase, SqlExecutor } from './database.js';
import type { TableName } from './sql.js';

interface WantedIndex {
  name: string;
  definition: string;
  /** `false`: left INVALID by an interrupted concurrent build; `null`: missing. */
  valid: boolean | null;
}

const LOCK_POLL_MS = 200;

/**
 * Builds the indexes `indexes` lists (see `Migration.indexes`) that are missing or INVALID, `CONCURRENTLY`, so
 * writers and v1 relays go on while a big table is scanned. An interrupted concurrent build leaves an INVALID
 * index behind: it is dropped and built again. Runs on every `migrate` (a catalog read when all are there).
 *
 * One process builds at a time, under a session advisory lock of its own (not the migrations' lock). The lock
 * is polled with `pg_try_advisory_lock` between statements: a session blocked in `pg_advisory_lock` would hold a
 * snapshot, and the concurrent build waits for every older snapshot to end, a deadlock.
 */
export async function buildIndexes(database: PgDatabase, name: TableName, indexes: string): Promise<void> {
  const lockKey = `outboxer-indexes:${name.schema}`;
  if (database.session === undefined) {
    await database.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lockKey]);
      for (const index of await wantedIndexes(tx, name, indexes)) await build(tx, name, index, '');
    });
    return;
  }
  await database.session(async (session) => {
    while (!((await session.query('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [lockKey])).rows[0] as { locked: boolean }).locked) {
      await sleep(LOCK_POLL_MS);
    }
    try {
      for (const index of await wantedIndexes(session, name, indexes)) await build(session, name, index, 'CONCURRENTLY');
    } finally {
      await session.query('SELECT pg_advisory_unlock(hashtext($1))', [lockKey]);
    }
  });
}

/**
 * Builds them inside the caller's transaction, plainly: for a table this same migration created, which is empty,
 * so nothing is gained by building concurrently, and a concurrent build would wait for every transaction in the
 * database that holds an older snapshot (a reporting query, a held snapshot), with nothing to show for it.
 */
export async function buildIndexesInTransaction(tx: SqlExecutor, name: TableName, indexes: string): Promise<void> {
  for (const index of await wantedIndexes(tx, name, indexes)) await build(tx, name, index, '');
}

async function wantedIndexes(executor: SqlExecutor, name: TableName, indexes: string): Promise<WantedIndex[]> {
  const found = await executor.query(
    `SELECT w.name, w.definition, i.indisvalid AS valid FROM (${indexes}) AS w
      LEFT JOIN pg_class c ON c.relname = w.name AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = $1)
      LEFT JOIN pg_index i ON i.indexrelid = c.oid
      WHERE i.indisvalid IS NOT TRUE`,
    [name.schema],
  );
  return found.rows as WantedIndex[];
}

async function build(executor: SqlExecutor, name: TableName, index: WantedIndex, mode: 'CONCURRENTLY' | ''): Promise<void> {
  const qualified = `${quoteIdentifier(name.schema)}.${quoteIdentifier(index.name)}`;
  if (index.valid === false) await executor.query(`DROP INDEX ${mode} IF EXISTS ${qualified}`);
  await executor.query(`CREATE INDEX ${mode} IF NOT EXISTS ${quoteIdentifier(index.name)} ${index.definition}`);
}
