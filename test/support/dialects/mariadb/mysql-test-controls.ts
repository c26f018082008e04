import type { PlainRow, TestControls } from '../../../conformance/store-harness.js';

type Sql = (text: string, params?: unknown[]) => Promise<readonly Record<string, unknown>[]>;

const NOW = 'UTC_TIMESTAMP(6)';

/** The conformance controls for the MariaDB/MySQL store: plain SQL on its tables (`?` placeholders, server clock). */
export function mysqlTestControls(sql: Sql, table = 'outbox'): TestControls {
  const outbox = `\`${table}\``;
  const keys = `\`${table}_idempotency\``;
  const ago = (column: string, seconds: number) => {
    if (!Number.isFinite(seconds)) throw new Error(`not a number of seconds: ${seconds}`);
    return `${column} = TIMESTAMPADD(MICROSECOND, ${-Math.round(seconds * 1e6)}, ${NOW})`;
  };
  return {
    async makeAvailableNow() {
      await sql(`UPDATE ${outbox} SET due_at = TIMESTAMPADD(SECOND, -1, ${NOW}) WHERE state = 'pending' AND due_at IS NOT NULL`);
    },
    async parkAllAsDead(reason) {
      await sql(`UPDATE ${outbox} SET state = 'dead', dead_at = ${NOW}, last_error = ?`, [reason]);
    },
    async insertPlain(rows: readonly PlainRow[]) {
      for (const row of rows) {
        const columns: [string, unknown][] = [
          ['topic', row.topic],
          ['type', row.type],
          ['payload', row.payload],
        ];
        if (row.key !== undefined) columns.push(['`key`', row.key]);
        if (row.headers !== undefined) columns.push(['headers', JSON.stringify(row.headers)]);
        if (row.destination !== undefined) columns.push(['destination', row.destination]);
        await sql(
          `INSERT INTO ${outbox} (${columns.map(([name]) => name).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
          columns.map(([, value]) => value),
        );
      }
    },
    async ageCreated(seconds) {
      await sql(`UPDATE ${outbox} SET ${ago('created_at', seconds)}`);
    },
    async agePublished(seconds) {
      await sql(`UPDATE ${outbox} SET ${ago('published_at', seconds)} WHERE state = 'published'`);
    },
    async markAllPublished() {
      await sql(`UPDATE ${outbox} SET state = 'published', published_at = ${NOW} WHERE state = 'pending'`);
    },
    async ageIdempotencyKeys(seconds) {
      await sql(`UPDATE ${keys} SET ${ago('created_at', seconds)}`);
    },
    async rowCount() {
      const rows = await sql(`SELECT COUNT(*) AS n FROM ${outbox}`);
      return Number(rows[0]?.n);
    },
  };
}
