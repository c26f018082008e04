import type { SqliteTableNames } from '../table-names.js';

/** The columns a read returns, as `toMessage` takes them (`attempts` counts the coming publish). */
const COLUMNS = `CAST(o.seq AS TEXT) AS seq, o.id, o.topic, o.type, o."key" AS "key", o.payload AS payload_json, o.payload_bytes,
  o.content_type, o.headers, o.created_at, o.attempts + 1 AS attempts, o.last_error, o.destination`;

/**
 * The statements of a read, one partition and one branch at a time, all inside one read transaction (a single
 * snapshot). Each keeps the literal conditions of its partial index (`state = 'pending'` and the `due_at` test),
 * so SQLite can use it:
 * - `fresh` `{ partition, after, limit }`: `<t>_fresh_idx` (partition_no, seq), rows above the position;
 * - `recheck` `{ partition, from, to, limit }`: the same index, `(from, to]`;
 * - `due` `{ partition, now, limit }`: `<t>_due_idx` (partition_no, due_at, seq), scheduled rows whose time came;
 * - `dueOf` `{ partition, now, limit, destination }`: `due` of one destination's rows only (`default`: rows without
 *   one; no destination is named so), a filter on the same index, run once per destination of a read that splits its
 *   due branch (fan-out); a separate statement, so `due` itself stays as it was;
 * - `blocker` `{ key, destination, seq, now }`: `<t>_due_key_idx` ("key", seq) backwards, the nearest earlier
 *   scheduled row of the key, due or not (docs/design/read-path.md, "Read path": the nearest, so a chain of holds stays in key
 *   order), of the same destination, NULL matching NULL (`IS`): order is per key and destination, so one
 *   destination's held rows never hold another's ("Fan-out to several destinations"). The destination is a filter
 *   on that index, which walks past other destinations' scheduled rows of the key.
 */
export interface SqliteReadStatements {
  readonly partitionCount: string;
  readonly fresh: string;
  readonly recheck: string;
  readonly due: string;
  readonly dueOf: string;
  readonly blocker: string;
}

export function sqliteReadStatements({ outbox, partitioning }: SqliteTableNames): SqliteReadStatements {
  // `o.seq`, not `seq`: ORDER BY would take the text alias of the result and sort '10' before '2'
  const pending = `FROM ${outbox} o WHERE o.partition_no = @partition AND o.state = 'pending'`;
  return Object.freeze({
    partitionCount: `SELECT partition_count FROM ${partitioning}`,
    fresh: `SELECT ${COLUMNS} ${pending} AND o.due_at IS NULL AND o.seq > @after ORDER BY o.seq LIMIT @limit`,
    recheck: `SELECT ${COLUMNS} ${pending} AND o.due_at IS NULL AND o.seq > @from AND o.seq <= @to ORDER BY o.seq LIMIT @limit`,
    due: `SELECT ${COLUMNS} ${pending} AND o.due_at IS NOT NULL AND o.due_at <= @now ORDER BY o.seq LIMIT @limit`,
    dueOf: `SELECT ${COLUMNS} ${pending} AND o.due_at IS NOT NULL AND o.due_at <= @now
      AND COALESCE(o.destination, 'default') = @destination ORDER BY o.seq LIMIT @limit`,
    blocker: `SELECT CAST(h.seq AS TEXT) AS seq, max(0, h.due_at - @now) AS due_in_ms FROM ${outbox} h
      WHERE h."key" = @key AND h.state = 'pending' AND h.due_at IS NOT NULL AND h.seq < @seq AND h.destination IS @destination
      ORDER BY h.seq DESC LIMIT 1`,
  });
}
