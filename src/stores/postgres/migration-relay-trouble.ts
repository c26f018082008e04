import { MAX_TROUBLE_BYTES } from '../../core/relay-trouble.js';
import { leaseTables } from './leases/lease-tables.js';
import type { TableName } from './sql.js';

/**
 * Migration 11: each relay reports broker trouble on its own relays row (docs/design/lease-protocol.md, "Hand-over and broker
 * trouble"). Expand only: two nullable columns on a table of a few rows; relays of earlier versions never
 * write them, and read as healthy.
 */
export function relayTroubleMigration(name: TableName): string {
  const { relays } = leaseTables(name);
  return `
ALTER TABLE ${relays} ADD COLUMN IF NOT EXISTS trouble text CHECK (octet_length(trouble) <= ${MAX_TROUBLE_BYTES});
ALTER TABLE ${relays} ADD COLUMN IF NOT EXISTS trouble_since timestamptz;
`;
}
