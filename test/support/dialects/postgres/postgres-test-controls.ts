import type { PlainRow, TestControls } from '../../../conformance/store-harness.js';

type Sql = (text: string, params?: unknown[]) => Promise<readonly Record<string, unknown>[]>;

/** The conformance controls for the PostgreSQL store (pg and PGlite): plain SQL on its two tables. */
export function postgresTestControls(sql: Sql, schema: string, table = 'outbox'): TestControls {
  const outbox = `"${schema}"."${table}"`;
  const keys = `"${schema}"."${table}_idempotency"`;
  const ago = (column: string, seconds: number) => {
    if (!Number.isFinite(seconds)) throw new Error(`not a number of seconds: ${seconds}`);
    return `${column} = now() - ${seconds} * interval '1 second'`;
  };
  return {
    async makeAvailableNow() {
      await sql(`UPDATE ${outbox} SET due_at = now() - interval '1 second' WHERE state = 'pending' AND due_at IS NOT NULL`);
    },
    async parkAllAsDead(reason) {
      await sql(`UPDATE ${outbox} SET state = 'dead', dead_at = now(), last_error = $1`, [reason]);
    },
    async insertPlain(rows: readonly PlainRow[]) {
      for (const row of rows) {
        const columns: [string, unknown][] = [
          ['topic', row.topic],
          ['type', row.type],
          ['payload', row.payload],
        ];
        if (row.key !== undefined) columns.push(['key', row.key]);
        if (row.headers !== undefined) columns.push(['headers', JSON.stringify(row.headers)]);
        if (row.destination !== undefined) columns.push(['destination', row.destination]);
        const names = columns.map(([name]) => name).join(', ');
        const values = columns.map((_, i) => `$${i + 1}`).join(', ');
        await sql(
          `INSERT INTO ${outbox} (${names}) VALUES (${values})`,
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
      await sql(`UPDATE ${outbox} SET state = 'published', published_at = now() WHERE state = 'pending'`);
    },
    async ageIdempotencyKeys(seconds) {
      await sql(`UPDATE ${keys} SET ${ago('created_at', seconds)}`);
    },
    async rowCount() {
      const rows = await sql(`SELECT count(*)::int AS n FROM ${outbox}`);
      return Number(rows[0]?.n);
    },
  };
}
