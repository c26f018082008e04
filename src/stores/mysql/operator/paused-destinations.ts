import type { DestinationPause } from '../../../core/ports.js';
import { checkDestinationPause, MAX_PAUSED_DESTINATIONS, tooManyPausedDestinations } from '../../../core/topic-pause-input.js';
import type { MysqlExecutor } from '../database.js';
import type { MysqlTableNames } from '../table-names.js';
import { isoTime } from './mysql-time.js';

/**
 * Pauses a whole destination (every topic of it) for every relay; false when it was paused already (the first
 * reason and time stay). `INSERT IGNORE` for "already paused", as `pauseTopic` does (paused-topics.ts says why).
 */
export async function pauseDestination(executor: MysqlExecutor, names: MysqlTableNames, destination: string, reason: string): Promise<boolean> {
  const input = checkDestinationPause(destination, reason);
  const inserted = await executor.query(
    `INSERT IGNORE INTO ${names.pausedDestinations} (destination, reason)
      SELECT ?, ? FROM DUAL WHERE (SELECT COUNT(*) FROM ${names.pausedDestinations}) < ${MAX_PAUSED_DESTINATIONS}`,
    [input.destination, input.reason],
  );
  if (inserted.affectedRows === 1) return true;
  const listed = await listPausedDestinations(executor, names);
  if (listed.some((pause) => pause.destination === input.destination)) return false;
  throw tooManyPausedDestinations(input.destination, listed.length);
}

/** Ends the pause of `destination`; false when it was not paused. */
export async function resumeDestination(executor: MysqlExecutor, names: MysqlTableNames, destination: string): Promise<boolean> {
  const input = checkDestinationPause(destination);
  const deleted = await executor.query(`DELETE FROM ${names.pausedDestinations} WHERE destination = ?`, [input.destination]);
  return deleted.affectedRows === 1;
}

/** The paused destinations, oldest pause first: what operators list and every relay's reader reads each period. */
export async function listPausedDestinations(executor: MysqlExecutor, names: MysqlTableNames): Promise<DestinationPause[]> {
  const result = await executor.query(
    `SELECT destination, reason, ${isoTime('paused_at')} AS paused_at FROM ${names.pausedDestinations} ORDER BY paused_at, destination`,
  );
  return result.rows.map((row) => ({ destination: String(row.destination), reason: String(row.reason), pausedAt: new Date(String(row.paused_at)) }));
}
