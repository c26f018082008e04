import type { DestinationPause } from '../../../core/ports.js';
import { checkDestinationPause, MAX_PAUSED_DESTINATIONS, tooManyPausedDestinations } from '../../../core/topic-pause-input.js';
import type { SqliteDatabase } from '../database.js';
import type { SqliteTableNames } from '../table-names.js';

interface PauseRow {
  destination: string;
  reason: string;
  paused_at: number;
}

/** Pauses a whole destination (every topic of it) for every relay; false when it was paused already (the first reason and time stay). */
export function pauseSqliteDestination(database: SqliteDatabase, names: SqliteTableNames, destination: string, reason: string): Promise<boolean> {
  let input: { readonly destination: string; readonly reason: string };
  try {
    input = checkDestinationPause(destination, reason);
  } catch (error) {
    return Promise.reject(error);
  }
  return database.write(() => {
    if (database.get(`SELECT 1 AS found FROM ${names.pausedDestinations} WHERE destination = ?`, [input.destination]) !== undefined) return false;
    const paused = Number(database.get(`SELECT count(*) AS n FROM ${names.pausedDestinations}`)?.n);
    if (paused >= MAX_PAUSED_DESTINATIONS) throw tooManyPausedDestinations(input.destination, paused);
    database.run(`INSERT INTO ${names.pausedDestinations} (destination, reason) VALUES (?, ?)`, [input.destination, input.reason]);
    return true;
  });
}

/** Ends the pause of `destination`; false when it was not paused. */
export function resumeSqliteDestination(database: SqliteDatabase, names: SqliteTableNames, destination: string): Promise<boolean> {
  let input: { readonly destination: string };
  try {
    input = checkDestinationPause(destination);
  } catch (error) {
    return Promise.reject(error);
  }
  return database.write(() => database.run(`DELETE FROM ${names.pausedDestinations} WHERE destination = ?`, [input.destination]) === 1);
}

/** The paused destinations, oldest pause first: what operators list and every relay's reader reads each period. */
export function listPausedDestinations(database: SqliteDatabase, names: SqliteTableNames): Promise<DestinationPause[]> {
  return database.read(() => {
    // paused_at has ms resolution: the rowid (always above every existing one) orders pauses of the same ms
    const rows = database.all(`SELECT destination, reason, paused_at FROM ${names.pausedDestinations} ORDER BY paused_at, rowid`) as unknown as PauseRow[];
    return rows.map((row) => ({ destination: row.destination, reason: row.reason, pausedAt: new Date(Number(row.paused_at)) }));
  });
}
