import type { SqliteDatabase } from '../../../../src/stores/sqlite/database.js';
import { SQLITE_NOW_MS } from '../../../../src/stores/sqlite/migrations.js';
import { sqliteTableNames } from '../../../../src/stores/sqlite/table-names.js';
import type { PlainRow, TestControls } from '../../../conformance/store-harness.js';

/** The conformance controls for the SQLite store: plain SQL on its tables, through a connection of their own. */
export function sqliteTestControls(database: SqliteDatabase, table = 'outbox'): TestControls {
  const { outbox, idempotency: keys } = sqliteTableNames(table);
  const ago = (column: string, seconds: number) => {
    if (!Number.isFinite(seconds)) throw new Error(`not a number of seconds: ${seconds}`);
    return `${column} = ${SQLITE_NOW_MS} - ${Math.round(seconds * 1000)}`;
  };
  const write = (sql: string, params: unknown[] = []) => database.write(() => void database.run(sql, params));
  return {
    makeAvailableNow: () => write(`UPDATE ${outbox} SET due_at = ${SQLITE_NOW_MS} - 1000 WHERE state = 'pending' AND due_at IS NOT NULL`),
    parkAllAsDead: (reason) => write(`UPDATE ${outbox} SET state = 'dead', dead_at = ${SQLITE_NOW_MS}, last_error = ?`, [reason]),
    async insertPlain(rows: readonly PlainRow[]) {
      for (const row of rows) {
        const columns: [string, unknown][] = [
          ['topic', row.topic],
          ['type', row.type],
          ['payload', row.payload],
        ];
        if (row.key !== undefined) columns.push(['"key"', row.key]);
        if (row.headers !== undefined) columns.push(['headers', JSON.stringify(row.headers)]);
        if (row.destination !== undefined) columns.push(['destination', row.destination]);
        await write(
          `INSERT INTO ${outbox} (${columns.map(([name]) => name).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
          columns.map(([, value]) => value),
        );
      }
    },
    ageCreated: (seconds) => write(`UPDATE ${outbox} SET ${ago('created_at', seconds)}`),
    agePublished: (seconds) => write(`UPDATE ${outbox} SET ${ago('published_at', seconds)} WHERE state = 'published'`),
    markAllPublished: () => write(`UPDATE ${outbox} SET state = 'published', published_at = ${SQLITE_NOW_MS} WHERE state = 'pending'`),
    ageIdempotencyKeys: (seconds) => write(`UPDATE ${keys} SET ${ago('created_at', seconds)}`),
    rowCount: () => database.read(() => Number(database.get(`SELECT count(*) AS n FROM ${outbox}`)?.n)),
  };
}
