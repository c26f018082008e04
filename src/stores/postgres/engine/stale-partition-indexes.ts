import { quoteIdentifier } from '../../../core/identifiers.js';
import type { PgDatabase, SqlExecutor } from '../database.js';
import type { TableName } from '../sql.js';
import { outboxOf } from './engine-state.js';

/**
 * Drops the partition indexes (`<t>_p<P>_idx`, `<t>_p<P>_due_idx`) of every count but `keep`: those of the count
 * before a resize, or those a cancelled resize built. `CONCURRENTLY` where the handle keeps a session (a read
 * still using one is waited for, writers never wait), plainly in a transaction otherwise. Returns their names.
 */
export async function dropStalePartitionIndexes(database: PgDatabase, name: TableName, keep: number): Promise<string[]> {
  const stale = (await listIndexes(database, name)).filter((index) => {
    const count = partitionCountOf(name, index);
    return count !== null && count !== keep;
  });
  if (stale.length === 0) return [];
  const drop = async (executor: SqlExecutor, mode: 'CONCURRENTLY' | '') => {
    for (const index of stale) await executor.query(`DROP INDEX ${mode} IF EXISTS ${quoteIdentifier(name.schema)}.${quoteIdentifier(index)}`);
  };
  if (database.session === undefined) await database.transaction((tx) => drop(tx, ''));
  else await database.session((session) => drop(session, 'CONCURRENTLY'));
  return stale;
}

async function listIndexes(executor: SqlExecutor, name: TableName): Promise<string[]> {
  const result = await executor.query(
    'SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = $1::regclass ORDER BY c.relname',
    [outboxOf(name)],
  );
  return (result.rows as { name: string }[]).map((row) => row.name);
}

/** The partition count in a partition index's name, or null for any other index of the table. */
function partitionCountOf(name: TableName, index: string): number | null {
  const prefix = `${name.table}_p`;
  if (!index.startsWith(prefix)) return null;
  const match = /^([1-9][0-9]{0,3})(_due)?_idx$/.exec(index.slice(prefix.length));
  return match === null ? null : Number(match[1]);
}
