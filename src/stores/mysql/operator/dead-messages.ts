import type { DeadMessage } from '../../../core/message.js';
import type { DestinationFilter } from '../../../core/ports.js';
import { MYSQL_NOW } from '../migrations.js';
import type { MysqlExecutor } from '../database.js';
import type { MysqlTableNames } from '../table-names.js';
import { isoTime } from './mysql-time.js';
import { checkDestinationFilter } from '../../../core/pending-message-input.js';

/** How many dead rows one statement of `retryDead('all')` or `purgeDead('all')` changes. */
const BULK_BATCH = 1000;

/**
 * The optional destination filter as a condition and its parameters: none without a filter; `<=>` so that `null`
 * picks the rows without a destination (the relay's own publisher).
 */
function destinationCondition(filter: DestinationFilter | undefined, column = 'destination'): { readonly sql: string; readonly params: readonly unknown[] } {
  const destination = checkDestinationFilter(filter?.destination);
  return destination === undefined ? { sql: '', params: [] } : { sql: ` AND ${column} <=> ?`, params: [destination] };
}

/** At most `limit` dead messages in the order they died (the `(state, dead_at, seq)` index), with their reason. */
export async function listDead(executor: MysqlExecutor, names: MysqlTableNames, limit: number, filter?: DestinationFilter): Promise<DeadMessage[]> {
  const destination = destinationCondition(filter);
  const { rows } = await executor.query(
    `SELECT id, topic, type, \`key\`, attempts, COALESCE(last_error, '') AS reason,
        ${isoTime('created_at')} AS created_at, ${isoTime('dead_at')} AS dead_at, destination
      FROM ${names.outbox} WHERE state = 'dead'${destination.sql} ORDER BY dead_at, seq LIMIT ?`,
    [...destination.params, limit],
  );
  return rows.map((row) => ({
    id: String(row.id),
    topic: String(row.topic),
    type: String(row.type),
    key: row.key === null || row.key === undefined ? null : String(row.key),
    attempts: Number(row.attempts),
    reason: String(row.reason),
    createdAt: new Date(String(row.created_at)),
    deadAt: new Date(String(row.dead_at)),
    destination: row.destination === null || row.destination === undefined ? null : String(row.destination),
  }));
}

/*
 * `due_at = now`: a retried row lies below every read position of its partition, so only the due branch of a
 * read finds it (as on PostgreSQL). MySQL refuses `IN (SELECT ... LIMIT)` on the same table, so the batches use the
 * single-table `UPDATE/DELETE ... ORDER BY seq LIMIT`.
 */
const retrySet = `SET state = 'pending', attempts = 0, due_at = ${MYSQL_NOW}, dead_at = NULL`;

export async function retryDead(executor: MysqlExecutor, names: MysqlTableNames, ids: readonly string[] | 'all', filter?: DestinationFilter): Promise<number> {
  const destination = destinationCondition(filter);
  if (ids === 'all')
    return inBatches(
      executor,
      `UPDATE ${names.outbox} ${retrySet} WHERE state = 'dead'${destination.sql} ORDER BY seq LIMIT ${BULK_BATCH}`,
      destination.params,
    );
  if (ids.length === 0) return 0;
  return (await executor.query(`UPDATE ${names.outbox} ${retrySet} WHERE state = 'dead' AND id IN (?)${destination.sql}`, [ids, ...destination.params]))
    .affectedRows;
}

export async function purgeDead(executor: MysqlExecutor, names: MysqlTableNames, ids: readonly string[] | 'all', filter?: DestinationFilter): Promise<number> {
  const destination = destinationCondition(filter);
  if (ids === 'all')
    return inBatches(executor, `DELETE FROM ${names.outbox} WHERE state = 'dead'${destination.sql} ORDER BY seq LIMIT ${BULK_BATCH}`, destination.params);
  if (ids.length === 0) return 0;
  return (await executor.query(`DELETE FROM ${names.outbox} WHERE state = 'dead' AND id IN (?)${destination.sql}`, [ids, ...destination.params])).affectedRows;
}

/** Runs a statement that changes at most BULK_BATCH rows until it changes fewer: each batch commits on its own. */
async function inBatches(executor: MysqlExecutor, statement: string, params: readonly unknown[]): Promise<number> {
  let total = 0;
  for (;;) {
    const changed = (await executor.query(statement, params.length === 0 ? undefined : params)).affectedRows;
    total += changed;
    if (changed < BULK_BATCH) return total;
  }
}
