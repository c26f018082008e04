import type { LeaseStatement } from './lease-tables.js';

/**
 * A new relay incarnation. Its lease runs from the database's clock at the insert; the id is fresh (made by
 * the caller of this statement, never reused), so no earlier partition can name it.
 */
export const joinRelay: LeaseStatement<[relayId: string, name: string, leaseMs: number, trouble: string | null]> = {
  sql: ({ relays }) => `INSERT INTO ${relays} (relay_id, name, lease_ms, expires_at, trouble, trouble_since)
    VALUES ($1::uuid, $2, $3::int, clock_timestamp() + $3::int * interval '1 millisecond', $4::text,
      CASE WHEN $4::text IS NULL THEN NULL ELSE clock_timestamp() END)`,
  params: (relayId, name, leaseMs, trouble) => [relayId, name, leaseMs, trouble],
};
