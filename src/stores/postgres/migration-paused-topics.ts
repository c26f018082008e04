import { quoteIdentifier } from '../../core/identifiers.js';
import { MAX_PAUSE_REASON_BYTES, MAX_PAUSED_TOPIC_BYTES } from '../../core/topic-pause-input.js';
import type { TableName } from './sql.js';

/** The quoted, schema-qualified table of operator pauses of one outbox table (`<t>_paused_topics_pkey` fits 63 bytes). */
export function pausedTopicsTable({ schema, table }: TableName): string {
  return `${quoteIdentifier(schema)}.${quoteIdentifier(`${table}_paused_topics`)}`;
}

/**
 * Migration 9: the topics operators paused, one row each, shared by every relay of the table (docs/table.md,
 * "Operator pauses"). Expand only and cheap on a table of any size: one small new table, no outbox row, index
 * or trigger touched; relays of earlier versions ignore it. Written by `pauseTopic`/`resumeTopic` only, read by
 * relays every few seconds and by operators.
 */
export function pausedTopicsMigration(name: TableName): string {
  return `
CREATE TABLE IF NOT EXISTS ${pausedTopicsTable(name)} (
  topic     text PRIMARY KEY CHECK (topic <> '' AND octet_length(topic) <= ${MAX_PAUSED_TOPIC_BYTES}),
  reason    text NOT NULL DEFAULT '' CHECK (octet_length(reason) <= ${MAX_PAUSE_REASON_BYTES}),
  paused_at timestamptz NOT NULL DEFAULT now()
);
`;
}
