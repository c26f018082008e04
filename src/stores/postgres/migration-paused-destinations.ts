import { quoteIdentifier } from '../../core/identifiers.js';
import { DESTINATION_PATTERN, MAX_DESTINATION_BYTES } from '../../core/message-rules.js';
import { MAX_PAUSE_REASON_BYTES } from '../../core/topic-pause-input.js';
import type { TableName } from './sql.js';

/**
 * The quoted, schema-qualified table of operator pauses of whole destinations: 60 bytes for the longest table name (40);
 * PostgreSQL shortens the name it chooses for the primary key to 63 bytes (`<t>_paused_destinatio_pkey` then).
 */
export function pausedDestinationsTable({ schema, table }: TableName): string {
  return `${quoteIdentifier(schema)}.${quoteIdentifier(`${table}_paused_destinations`)}`;
}

/**
 * Migration 13: the destinations operators paused as a whole (every topic of them), one row each, shared by every
 * relay of the table (docs/table.md, "Operator pauses"). A destination is named as the outbox's `destination`
 * column names it (`default`: the rows without one). Expand only and cheap on a table of any size: one small new
 * table, no outbox row, index or trigger touched; relays of earlier versions ignore it. Written by
 * `pauseDestination`/`resumeDestination` only, read by relays every few seconds and by operators.
 */
export function pausedDestinationsMigration(name: TableName): string {
  return `
CREATE TABLE IF NOT EXISTS ${pausedDestinationsTable(name)} (
  destination text PRIMARY KEY CHECK (destination ~ '${DESTINATION_PATTERN}' AND octet_length(destination) <= ${MAX_DESTINATION_BYTES}),
  reason      text NOT NULL DEFAULT '' CHECK (octet_length(reason) <= ${MAX_PAUSE_REASON_BYTES}),
  paused_at   timestamptz NOT NULL DEFAULT now()
);
`;
}
