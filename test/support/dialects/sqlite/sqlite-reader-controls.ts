import type { SqliteDatabase } from '../../../../src/stores/sqlite/database.js';
import { SQLITE_NOW_MS } from '../../../../src/stores/sqlite/migrations.js';
import { sqliteTableNames } from '../../../../src/stores/sqlite/table-names.js';
import type { ReaderControls } from '../../../conformance/reader-harness.js';

/** Every column of the outbox, each quoted, so a NULL, a number and a blob each print their own way. */
const ROW = `quote(seq) || ':' || quote(id) || ':' || quote(topic) || ':' || quote(type) || ':' || quote("key") || ':' ||
  quote(payload) || ':' || quote(payload_bytes) || ':' || quote(content_type) || ':' || quote(headers) || ':' || quote(state) || ':' ||
  quote(created_at) || ':' || quote(due_at) || ':' || quote(attempts) || ':' || quote(last_error) || ':' ||
  quote(published_at) || ':' || quote(dead_at) || ':' || quote(partition_no)`;

/**
 * The reader conformance controls for the SQLite store: plain SQL on the outbox, through a connection of their
 * own. No `openEnqueue` or `lockMessage`: SQLite runs no statements side by side (one writer, no row locks).
 * SQLite has no row version to show, so `rowVersions` fingerprints every column of every row, with the count.
 */
export function sqliteReaderControls(database: SqliteDatabase, table = 'outbox'): ReaderControls {
  const { outbox } = sqliteTableNames(table);
  return {
    async insertPlain(rows) {
      await database.write(() => {
        for (const row of rows) {
          database.run(
            `INSERT INTO ${outbox} (topic, type, payload, "key", due_at)
            VALUES (@topic, @type, @payload, @key, CASE WHEN @due IS NOT NULL THEN ${SQLITE_NOW_MS} + @due END)`,
            [
              {
                topic: row.topic,
                type: row.type,
                payload: row.payload,
                key: row.key ?? null,
                due: row.dueInSeconds === undefined ? null : Math.round(row.dueInSeconds * 1000),
              },
            ],
          );
        }
      });
    },
    async rowVersions() {
      const row = await database.read(() =>
        database.get(`SELECT count(*) AS n, group_concat(v, ',') AS v
        FROM (SELECT ${ROW} AS v FROM ${outbox} ORDER BY seq)`),
      );
      return `${String(row?.n)} ${String(row?.v)}`;
    },
    async makeDueNow() {
      await database.write(() => database.run(`UPDATE ${outbox} SET due_at = ${SQLITE_NOW_MS} - 1000 WHERE state = 'pending' AND due_at IS NOT NULL`));
    },
  };
}
