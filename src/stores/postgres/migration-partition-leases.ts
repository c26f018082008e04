import { quoteIdentifier } from '../../core/identifiers.js';
import { DEFAULT_PARTITION_COUNT } from '../shared/partition-count.js';
import { leaseTables } from './leases/lease-tables.js';
import type { TableName } from './sql.js';

/**
 * Migration 6, the expand step of engine v2 (docs/table.md, "The relays' side tables"). Cheap on a table of any
 * size: it creates the partition function and three small tables, and touches no outbox row, no outbox index
 * and no trigger. The index on
 * `outboxer_partition(key, id, P)` comes with the read path, built `CONCURRENTLY` outside this transaction.
 */
export function partitionLeasesMigration(name: TableName): string {
  const s = quoteIdentifier(name.schema);
  const { partitioning, relays, partitions } = leaseTables(name);
  return `
-- The partition of a row: keyed rows by their key (one key, one partition), unkeyed rows spread by id.
-- hashtextextended is the hash PostgreSQL's own hash partitioning relies on, so it stays stable across upgrades;
-- the double modulo keeps the result non-negative (abs() of the smallest bigint overflows).
CREATE OR REPLACE FUNCTION ${s}.outboxer_partition(key text, id uuid, partitions integer) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
  SELECT (((hashtextextended(COALESCE(key, id::text), 0) % partitions) + partitions) % partitions)::integer
$fn$;

CREATE TABLE IF NOT EXISTS ${partitioning} (
  singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  engine          text NOT NULL DEFAULT 'v1' CHECK (engine IN ('v1', 'v2')),
  partition_count integer NOT NULL DEFAULT ${DEFAULT_PARTITION_COUNT} CHECK (partition_count BETWEEN 1 AND 1024),
  generation      integer NOT NULL DEFAULT 1 CHECK (generation >= 1),
  fence_until     timestamptz NOT NULL DEFAULT '-infinity'
);
INSERT INTO ${partitioning} (singleton) VALUES (true) ON CONFLICT DO NOTHING;

CREATE TABLE IF NOT EXISTS ${relays} (
  relay_id     uuid PRIMARY KEY,
  name         text NOT NULL CHECK (octet_length(name) BETWEEN 1 AND 200),
  lease_ms     integer NOT NULL CHECK (lease_ms > 0),
  joined_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  heartbeat_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at   timestamptz NOT NULL,
  leaving      boolean NOT NULL DEFAULT false
) WITH (fillfactor = 50);

CREATE TABLE IF NOT EXISTS ${partitions} (
  partition  integer PRIMARY KEY CHECK (partition >= 0),
  generation integer NOT NULL,
  owner      uuid,
  state      text NOT NULL DEFAULT 'free' CHECK (state IN ('free', 'owned', 'draining')),
  epoch      bigint NOT NULL DEFAULT 0,
  granted_at timestamptz,
  unclean    integer NOT NULL DEFAULT 0,
  CHECK ((owner IS NULL) = (state = 'free'))
) WITH (fillfactor = 50);
INSERT INTO ${partitions} (partition, generation)
  SELECT p, c.generation FROM ${partitioning} c, generate_series(0, c.partition_count - 1) AS p
  ON CONFLICT DO NOTHING;
`;
}
