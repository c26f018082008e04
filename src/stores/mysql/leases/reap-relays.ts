import { MYSQL_NOW } from '../migrations.js';
import type { MysqlExecutor } from '../database.js';
import type { MysqlTableNames } from '../table-names.js';

/**
 * Inside the acquire's transaction: deletes the relays whose lease ran out by the database clock and frees their
 * partitions with `unclean + 1`. The candidates come from a plain read, so a transaction with nothing to reap
 * (the usual case) locks no relays row; each candidate is then locked by its primary key and its expiry re-checked
 * on the latest version (`FOR UPDATE` reads it): a beat that committed first keeps the relay, and an acquire of
 * that relay (which share-locks its own row while it grants) is waited for, so its grants are freed too.
 */
export async function reapRelays(tx: MysqlExecutor, names: MysqlTableNames): Promise<number> {
  const expired = await tx.query(`SELECT relay_id FROM ${names.relays} WHERE expires_at <= ${MYSQL_NOW}`);
  if (expired.rows.length === 0) return 0;
  const locked = await tx.query(`SELECT relay_id FROM ${names.relays} WHERE relay_id IN (?) AND expires_at <= ${MYSQL_NOW} ORDER BY relay_id FOR UPDATE`, [
    expired.rows.map((row) => String(row.relay_id)),
  ]);
  return removeRelays(
    tx,
    names,
    locked.rows.map((row) => String(row.relay_id)),
    1,
  );
}

/**
 * Deletes relays rows, then frees every partition they own in the same transaction, so no partition ever names a
 * relay without a row (a grant then needs only `owner IS NULL`). `unclean` grows by one for a takeover from a dead
 * owner, not for a relay that left cleanly. The update waits (never skips) on a partition row locked by the dead
 * owner's own late completion. Returns how many partitions were freed.
 */
export async function removeRelays(tx: MysqlExecutor, names: MysqlTableNames, relayIds: readonly string[], unclean: 0 | 1): Promise<number> {
  if (relayIds.length === 0) return 0;
  const deleted = await tx.query(`DELETE FROM ${names.relays} WHERE relay_id IN (?)`, [relayIds]);
  if (deleted.affectedRows === 0) return 0;
  // with any report a beat wrote while the reap waited for its row
  await tx.query(`DELETE FROM ${names.relayTrouble} WHERE relay_id IN (?) OR relay_id NOT IN (SELECT relay_id FROM ${names.relays})`, [relayIds]);
  const freed = await tx.query(`UPDATE ${names.partitions} SET owner = NULL, state = 'free', unclean = unclean + ? WHERE owner IN (?)`, [unclean, relayIds]);
  return freed.affectedRows;
}
