import type { DestinationPause } from '../../../core/ports.js';
import { checkDestinationPause, MAX_PAUSED_DESTINATIONS, tooManyPausedDestinations } from '../../../core/topic-pause-input.js';
import type { SqlExecutor } from '../database.js';
import { pausedDestinationsTable } from '../migration-paused-destinations.js';
import { namedStatement, type NamedStatement, runStatement } from '../named-statement.js';
import type { TableName } from '../sql.js';

interface PauseRow {
  destination: string;
  reason: string;
  paused_at: Date | string;
}

/** The statements of operator pauses of whole destinations for one table, built once from its validated, quoted name. */
export interface PausedDestinationStatements {
  /** Inserts the pause unless the destination is paused already or MAX_PAUSED_DESTINATIONS are; returns the row it inserted. */
  readonly pause: NamedStatement;
  readonly resume: NamedStatement;
  /** Oldest pause first: what operators list and every relay reads each period. */
  readonly list: NamedStatement;
}

export function pausedDestinationStatements(name: TableName): PausedDestinationStatements {
  const table = pausedDestinationsTable(name);
  return Object.freeze({
    // the count is a few index entries (at most MAX_PAUSED_DESTINATIONS); two pauses racing past it add one each, no more
    pause: namedStatement(`INSERT INTO ${table} (destination, reason)
      SELECT $1::text, $2::text WHERE (SELECT count(*) FROM ${table}) < ${MAX_PAUSED_DESTINATIONS}
      ON CONFLICT (destination) DO NOTHING
      RETURNING destination`),
    resume: namedStatement(`DELETE FROM ${table} WHERE destination = $1::text RETURNING destination`),
    list: namedStatement(`SELECT destination, reason, paused_at FROM ${table} ORDER BY paused_at, destination`),
  });
}

/** Pauses `destination` (every topic of it) for every relay; false when it was paused already (the first reason and time stay). */
export async function pauseDestination(
  executor: SqlExecutor,
  statements: PausedDestinationStatements,
  prepare: boolean,
  destination: string,
  reason: string,
): Promise<boolean> {
  const input = checkDestinationPause(destination, reason);
  const inserted = await runStatement(executor, statements.pause, [input.destination, input.reason], prepare);
  if (inserted.rows.length === 1) return true;
  const listed = await listPausedDestinations(executor, statements, prepare);
  if (listed.some((pause) => pause.destination === input.destination)) return false;
  throw tooManyPausedDestinations(input.destination, listed.length);
}

/** Ends the pause of `destination`; false when it was not paused. */
export async function resumeDestination(
  executor: SqlExecutor,
  statements: PausedDestinationStatements,
  prepare: boolean,
  destination: string,
): Promise<boolean> {
  const input = checkDestinationPause(destination);
  const deleted = await runStatement(executor, statements.resume, [input.destination], prepare);
  return deleted.rows.length === 1;
}

export async function listPausedDestinations(executor: SqlExecutor, statements: PausedDestinationStatements, prepare: boolean): Promise<DestinationPause[]> {
  const result = await runStatement(executor, statements.list, [], prepare);
  return (result.rows as PauseRow[]).map((row) => ({ destination: row.destination, reason: row.reason, pausedAt: new Date(row.paused_at) }));
}
