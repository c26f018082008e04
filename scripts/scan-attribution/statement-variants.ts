import { completeDeleting, completePublishedDeleting } from '../../src/stores/postgres/reader/complete-partitions.js';
import { readPartitions } from '../../src/stores/postgres/reader/read-partitions.js';
import { readerTables } from '../../src/stores/postgres/reader/reader-tables.js';

/** A statement to time: its label, its text and its parameters. */
export type StatementVariant = [label: string, sql: string, params: unknown[]];

/** What the relay's read asked for, and the batch of a lane's partitions it returned, as completed in step 2. */
export interface VariantRows {
  readonly schema: string;
  readonly partitionCount: number;
  readonly requests: readonly { partition: number; limit: number }[];
  readonly laneLength: number;
  readonly readRows: number;
  readonly batch: readonly { partition: number; epoch: string; ids: string[]; seqs: string[] }[];
  readonly relayId: string;
}

/**
 * The read and the completion as built, proposals on them and the ideal relay's statements, on the same rows.
 * `leftOut` hears of a proposal dropped because the statement it edits changed.
 */
export function statementVariants(rows: VariantRows, leftOut: (line: string) => void): { variants: StatementVariant[]; completeRows: number } {
  const { schema, partitionCount, requests, readRows, batch } = rows;
  const tables = readerTables({ schema, table: 'outbox' });
  const replace = (text: string, from: string, to: string, all = false) => {
    if (!text.includes(from)) throw new Error(`variant: ${JSON.stringify(from.slice(0, 60))} not found in the statement (src changed?)`);
    return all ? text.replaceAll(from, to) : text.replace(from, to);
  };
  const readSql = readPartitions.sql(tables, partitionCount);
  // proposals on the read, built by editing its text: left out, with the reason, once the read no longer has that text
  const edited = (label: string, build: () => string): [string, string][] => {
    try {
      return [[label, build()]];
    } catch (error) {
      leftOut(`- variant "${label}" left out: ${(error as Error).message}`);
      return [];
    }
  };
  // the hold probe and the due branch are gated in the read itself (a scheduled row in the table, in the partition)
  const readEdits = [...edited('read, no ORDER BY (the relay sorts)', () => replace(readSql, '\n    ORDER BY f.partition, f.seq', ''))];
  // the fresh branch alone, one LATERAL index scan per partition: the least a partitioned read can cost
  const freshOnly = `SELECT r.partition, o.* FROM unnest($1::int[], $2::int[]) AS r(partition, lim) CROSS JOIN LATERAL (
      SELECT o.seq, o.id, o.topic, o.type, o.key, o.payload::text AS payload_json, o.payload_bytes, o.content_type, o.headers, o.created_at,
        o.attempts + 1 AS attempts, o.last_error, o.destination
      FROM ${tables.outbox} o WHERE ${tables.partitionOf('o', partitionCount)} = r.partition AND o.state = 'pending' AND o.seq > 0 AND o.due_at IS NULL
      ORDER BY o.seq LIMIT r.lim) o`;
  // untyped: a trailing argument (paused destinations) may or may not exist at this commit; [] means none
  const readParams = (readPartitions.params as (...args: unknown[]) => unknown[])(
    requests.map((r) => r.partition),
    requests.map(() => null),
    requests.map(() => null),
    requests.map(() => null),
    requests.map(() => null),
    requests.map((r) => r.limit),
    [],
  );
  // as the ideal relay reads (no state filter: its table holds pending rows only; seq not cast, or ORDER BY would sort the text)
  const floorRead = `SELECT seq, id, topic, type, key, payload::text AS payload, headers, created_at FROM ${tables.outbox} WHERE seq > $1::int8 ORDER BY seq LIMIT ${readRows}`;

  const rowsOf = batch.flatMap((b) => b.ids.map((id, i) => ({ partition: b.partition, id, seq: b.seqs[i] as string })));
  const fence = [rows.relayId, batch.map((b) => b.partition), batch.map((b) => b.epoch), rowsOf.map((r) => r.partition)] as const;
  const publishedSql = completePublishedDeleting.sql(tables, 0);
  const publishedParams = completePublishedDeleting.params(
    ...fence,
    rowsOf.map((r) => r.seq),
    rowsOf.map((r) => r.id),
  );
  const outcomesSql = completeDeleting.sql(tables, 0);
  const outcomesParams = (bySeq: boolean) =>
    completeDeleting.params(
      ...fence,
      rowsOf.map((r) => r.id),
      rowsOf.map(() => 'published' as const),
      rowsOf.map(() => 0),
      rowsOf.map(() => null),
      rowsOf.map((r) => (bySeq ? r.seq : null)),
    );
  const floorDelete = `DELETE FROM ${tables.outbox} WHERE seq = ANY($1::int8[])`;
  // the floor of a fenced completion: the same partition lock, then one DELETE by seq with no row lock, so a row
  // another session locks would be waited for (what the statements as built must not do)
  const lockedSql = publishedSql.slice(publishedSql.indexOf('WITH locked AS MATERIALIZED ('), publishedSql.indexOf('), sent AS'));
  const leanPublished = `${lockedSql}), published AS (
      DELETE FROM ${tables.outbox} o USING unnest($4::int[], $5::int8[]) AS m(partition, seq) JOIN locked l ON l.partition = m.partition
      WHERE o.seq = m.seq AND o.state = 'pending'
      RETURNING m.partition)
    SELECT r.partition, l.partition IS NOT NULL AS applied, (SELECT count(*) FROM published p WHERE p.partition = r.partition)::int AS published
    FROM unnest($2::int[], $3::int8[]) AS r(partition, epoch) LEFT JOIN locked l ON l.partition = r.partition`;
  const variants: StatementVariant[] = [
    ['read, as built', readSql, readParams],
    ...readEdits.map(([label, sql]): StatementVariant => [label, sql, readParams]),
    ['read: the fresh branch alone (LATERAL per partition)', freshOnly, [requests.map((r) => r.partition), requests.map((r) => r.limit)]],
    [`ideal read: seq > $1 ORDER BY seq LIMIT ${readRows}`, floorRead, ['0']],
    ['complete, as built: published rows by seq (what the relay sends)', publishedSql, publishedParams],
    ['complete, as built: any outcome, published rows by seq', outcomesSql, outcomesParams(true)],
    ['complete, as built: any outcome by id (an unwritten outcome again)', outcomesSql, outcomesParams(false)],
    ['complete floor: partition lock + one DELETE by seq, no row lock', leanPublished, [...fence, rowsOf.map((r) => r.seq)]],
    [`ideal delete: seq = ANY($1) (${rowsOf.length} rows)`, floorDelete, [rowsOf.map((r) => r.seq)]],
  ];
  return { variants, completeRows: rowsOf.length };
}
