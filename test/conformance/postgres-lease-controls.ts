import type { LeaseControls } from './lease-harness.js';

type Sql = (text: string, params?: unknown[]) => Promise<readonly Record<string, unknown>[]>;

/** The lease conformance controls for the PostgreSQL store (pg and PGlite): plain SQL on the side tables. */
export function postgresLeaseControls(sql: Sql, schema: string, table = 'outbox'): LeaseControls {
  const relays = `"${schema}"."${table}_relays"`;
  const partitioning = `"${schema}"."${table}_partitioning"`;
  return {
    async expireRelay(relayId) {
      const rows = await sql(`UPDATE ${relays} SET expires_at = now() - interval '1 second' WHERE relay_id = $1 RETURNING relay_id`, [relayId]);
      if (rows.length !== 1) throw new Error(`no relay ${relayId} to expire`);
    },
    async configure({ engine, fenceInSeconds }) {
      await sql(`UPDATE ${partitioning} SET engine = $1,
        fence_until = CASE WHEN $2::float8 IS NULL THEN '-infinity' ELSE now() + $2::float8 * interval '1 second' END`, [engine, fenceInSeconds ?? null]);
    },
  };
}
