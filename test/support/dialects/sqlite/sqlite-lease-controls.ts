import type { SqliteDatabase } from '../../../../src/stores/sqlite/database.js';
import { SQLITE_NOW_MS } from '../../../../src/stores/sqlite/migrations.js';
import { sqliteTableNames } from '../../../../src/stores/sqlite/table-names.js';
import type { LeaseControls } from '../../../conformance/lease-harness.js';

/**
 * The lease conformance controls for the SQLite store: plain SQL on the side tables, through a connection of
 * their own. No `lockRelay`: SQLite runs no two statements side by side, so there is no race to provoke.
 */
export function sqliteLeaseControls(database: SqliteDatabase, table = 'outbox'): LeaseControls {
  const { relays, partitioning } = sqliteTableNames(table);
  return {
    async expireRelay(relayId) {
      const changed = await database.write(() => database.run(`UPDATE ${relays} SET expires_at = ${SQLITE_NOW_MS} - 1000 WHERE relay_id = ?`, [relayId]));
      if (changed !== 1) throw new Error(`no relay ${relayId} to expire`);
    },
    async configure({ resizeTo }) {
      await database.write(() => database.run(`UPDATE ${partitioning} SET resize_to = @resizeTo`, [{ resizeTo: resizeTo ?? null }]));
    },
  };
}
