import { DEFAULT_DESTINATION } from '../../../core/message-rules.js';
import type { PartitionReadRequest } from '../../../core/ports.js';
import { MYSQL_NOW } from '../migrations.js';
import { quoteMysql, type MysqlTableNames } from '../table-names.js';

const ISO = '%Y-%m-%dT%H:%i:%s.%fZ';

/**
 * The read of every requested partition in one statement, writing and locking nothing (an autocommit SELECT reads
 * one snapshot). Per partition, each branch a subquery on the `(partition_no, state, due_at, seq)` index with its
 * own LIMIT:
 * - `fresh`: pending rows above the position, not scheduled (`due_at IS NULL`), in seq order;
 * - `recheck`: the same in `(from, min(to, position)]`, only for partitions whose recheck the horizon settled;
 * - `due`: scheduled rows whose `due_at` has come, at any seq.
 * Every row carries the hold probe (`waits`): the nearest earlier pending scheduled row of its key, due or not, as
 * `<seq>:<ms until due>`, from the `(held_key, seq)` index (held_key is the key of scheduled rows only). Order is per key and
 * destination (docs/design/fan-out.md): the probe asks for a row of the same destination,
 * NULL matching NULL (`<=>`), a filter on the rows of that index, which walks past other destinations' scheduled
 * rows of the key. Positions, limits and partitions are written into the text
 * as numbers (`checkRead` allowed only digits), so the server plans each branch with its own constants. The rows come
 * unsorted (no temporary table for the union); the caller sorts them by partition and seq. The indexes are forced:
 * once a drain has deleted rows, MariaDB planned a branch as a scan of the primary key from `seq > after` (80-110 ms
 * a branch, against 0.1 ms on the partition index).
 *
 * `due`: the partitions that get due branches (the caller's walk found a scheduled row there); a due branch costs what
 * a fresh one does to plan, found rows or not, and most reads have none to find.
 *
 * `dueDestinations` (from `checkDueDestinations`, so only names reach the text): one due branch per destination,
 * of its rows only (`default`: the rows without one), each with the partition's limit, a filter on the rows the index
 * range returns; none for an empty list; absent, one due branch over every destination. The fresh and recheck
 * branches keep every destination (the position must pass every fresh row).
 */
export function readPartitionsSql(
  names: MysqlTableNames,
  requests: readonly PartitionReadRequest[],
  settled: ReadonlySet<number>,
  due: ReadonlySet<number>,
  dueDestinations?: readonly string[],
): string {
  const o = names.outbox;
  const select = (partition: number, source: string, condition: string, limit: number) => `(SELECT ${partition} AS partition_no, '${source}' AS source,
      CAST(o.seq AS CHAR) AS seq, o.id, o.topic, o.type, o.\`key\`, o.payload AS payload_json, o.payload_bytes, o.content_type,
      o.headers, DATE_FORMAT(o.created_at, '${ISO}') AS created_at, o.attempts + 1 AS attempts, o.last_error, o.destination,
      (SELECT CONCAT(h.seq, ':', GREATEST(0, CEIL(TIMESTAMPDIFF(MICROSECOND, ${MYSQL_NOW}, h.due_at) / 1000))) FROM ${o} h FORCE INDEX (${quoteMysql(`${names.table}_held_key_idx`)})
        WHERE h.held_key = o.\`key\` AND h.seq < o.seq AND h.destination <=> o.destination
        ORDER BY h.seq DESC LIMIT 1) AS waits
    FROM ${o} o FORCE INDEX (${quoteMysql(`${names.table}_read_idx`)}) WHERE o.partition_no = ${partition} AND o.state = 'pending' AND ${condition}
    ORDER BY o.seq LIMIT ${limit})`;
  const dueFilters = dueDestinations === undefined ? [''] : dueDestinations.map((name) => ` AND COALESCE(o.destination, '${DEFAULT_DESTINATION}') = '${name}'`);
  const branches = requests.flatMap((r) => {
    const after = r.after ?? '0';
    const list = [select(r.partition, 'fresh', `o.due_at IS NULL AND o.seq > ${after}`, r.limit)];
    if (r.recheck !== null && r.after !== null && settled.has(r.partition)) {
      const to = BigInt(r.recheck.to) < BigInt(r.after) ? r.recheck.to : r.after;
      list.push(select(r.partition, 'recheck', `o.due_at IS NULL AND o.seq > ${r.recheck.from ?? '0'} AND o.seq <= ${to}`, r.limit));
    }
    if (due.has(r.partition))
      for (const filter of dueFilters) list.push(select(r.partition, 'due', `o.due_at IS NOT NULL AND o.due_at <= ${MYSQL_NOW}${filter}`, r.limit));
    return list;
  });
  return branches.join('\nUNION ALL\n');
}
