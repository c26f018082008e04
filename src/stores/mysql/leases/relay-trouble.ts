import { MYSQL_NOW } from '../migrations.js';
import type { MysqlExecutor } from '../database.js';
import type { MysqlTableNames } from '../table-names.js';

/**
 * A relay's broker trouble as it reported it with a join or beat: one row while it lasts (`trouble_since` kept
 * from its first report), none once it reports `null`. Rows of relays that are gone are deleted with them.
 */
export async function writeTrouble(executor: MysqlExecutor, names: MysqlTableNames, relayId: string, trouble: string | null): Promise<void> {
  if (trouble === null) {
    await executor.query(`DELETE FROM ${names.relayTrouble} WHERE relay_id = ?`, [relayId]);
    return;
  }
  await executor.query(
    `INSERT INTO ${names.relayTrouble} (relay_id, trouble, trouble_since) VALUES (?, ?, ${MYSQL_NOW})
      ON DUPLICATE KEY UPDATE trouble = VALUES(trouble)`,
    [relayId, trouble],
  );
}
