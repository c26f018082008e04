import type { OutboxMessage } from '../../../core/message.js';
import type { PartitionMessage, PartitionReadRequest } from '../../../core/ports.js';
import { type MessageRow, toMessage } from '../../shared/message-rows.js';
import type { SqliteDatabase } from '../database.js';
import type { SqliteReadStatements } from './sqlite-read-statements.js';

interface SqliteMessageRow extends Omit<MessageRow, 'created_at'> {
  created_at: number;
}

/**
 * One partition's rows: fresh above the position, the recheck range `(from, to]` capped at the position (none
 * without one) when `recheck` applies, and due rows at any seq, each branch at most `limit` rows. The branches are
 * disjoint (by `due_at`, and by seq for fresh and recheck), so a row comes once; they come back in seq order.
 * `dueDestinations`: the due branch once per destination, of its rows only, each up to `limit`; absent, one over all.
 */
export function readPartition(
  database: SqliteDatabase,
  sql: SqliteReadStatements,
  request: PartitionReadRequest,
  recheck: boolean,
  now: number,
  dueDestinations?: readonly string[],
): PartitionMessage[] {
  const { partition, limit } = request;
  const after = request.after === null ? 0n : BigInt(request.after);
  const branch = (source: PartitionMessage['source'], statement: string, params: Record<string, unknown>) =>
    database.all(statement, [{ partition, limit, ...params }]).map((row) => ({ row: row as unknown as SqliteMessageRow, source }));
  const rows = [
    ...branch('fresh', sql.fresh, { after }),
    ...(recheck && request.recheck !== null
      ? branch('recheck', sql.recheck, { from: request.recheck.from === null ? 0n : BigInt(request.recheck.from), to: min(BigInt(request.recheck.to), after) })
      : []),
    ...(dueDestinations === undefined
      ? branch('due', sql.due, { now })
      : dueDestinations.flatMap((destination) => branch('due', sql.dueOf, { now, destination }))),
  ].sort((a, b) => compareSeq(a.row.seq, b.row.seq));
  return rows.map(({ row, source }) => {
    const message = toMessage({ ...row, created_at: new Date(row.created_at) }) as OutboxMessage & {
      -readonly [K in 'partition' | 'source' | 'waitsFor']: PartitionMessage[K];
    };
    message.partition = partition;
    message.source = source;
    message.waitsFor = null;
    if (row.key !== null) {
      const blocker = database.get(sql.blocker, [{ key: row.key, destination: row.destination ?? null, seq: BigInt(row.seq), now }]);
      if (blocker !== undefined) message.waitsFor = { seq: String(blocker.seq), dueInMs: Number(blocker.due_in_ms) };
    }
    return message;
  });
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
const compareSeq = (a: string, b: string) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
