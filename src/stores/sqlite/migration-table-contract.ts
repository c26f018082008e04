import { quoteIdentifier } from '../../core/identifiers.js';
import {
  MAX_HEADER_NAME_BYTES,
  MAX_HEADER_VALUE_BYTES,
  MAX_DESTINATION_BYTES,
  MAX_HEADERS,
  MAX_KEY_BYTES,
  MAX_TOPIC_BYTES,
  MAX_TYPE_BYTES,
  MessageRules,
} from '../../core/message-rules.js';
import { traceparentSql } from '../shared/traceparent-sql.js';
import { addColumnSql } from './migration-add-column.js';
import type { SqliteTableNames } from './table-names.js';

/** UTF-8 bytes of a text value. */
const bytes = (value: string) => `length(CAST(${value} AS BLOB))`;
/** A control character (NUL apart: GLOB stops at it, so it is looked for in the bytes). */
const CONTROL_GLOB = `'*[' || char(1) || '-' || char(31) || char(127) || ']*'`;
const hasNul = (value: string) => `instr(CAST(${value} AS BLOB), x'00') > 0`;
const textBad = (value: string, maxBytes: number) => `${value} = '' OR ${bytes(value)} > ${maxBytes} OR ${value} GLOB ${CONTROL_GLOB} OR ${hasNul(value)}`;
/** A UUID in lowercase hex, 8-4-4-4-12: only hex digits and dashes, the dashes where they go. */
const idBad = (id: string) =>
  `typeof(${id}) <> 'text' OR length(${id}) <> 36 OR ${id} GLOB '*[^0-9a-f-]*' OR length(replace(${id}, '-', '')) <> 32
      OR substr(${id}, 9, 1) <> '-' OR substr(${id}, 14, 1) <> '-' OR substr(${id}, 19, 1) <> '-' OR substr(${id}, 24, 1) <> '-'`;
/** TOPIC_PATTERN as GLOBs: only its characters, no empty part. */
const topicBad = (topic: string) =>
  `${topic} = '' OR ${topic} GLOB '*[^A-Za-z0-9_:/.-]*' OR ${topic} GLOB '.*' OR ${topic} GLOB '*.' OR ${topic} GLOB '*..*' OR ${bytes(topic)} > ${MAX_TOPIC_BYTES}`;
/**
 * DESTINATION_PATTERN (`^[A-Za-z0-9][A-Za-z0-9_-]*$`) as GLOBs, text only and without NUL (GLOB stops at it), at most
 * MAX_DESTINATION_BYTES; NULL (the relay's own publisher) is tested apart.
 */
const destinationBad = (destination: string) =>
  `typeof(${destination}) <> 'text' OR ${destination} NOT GLOB '[A-Za-z0-9]*' OR ${destination} GLOB '*[^A-Za-z0-9_-]*' OR ${hasNul(destination)}
      OR ${bytes(destination)} > ${MAX_DESTINATION_BYTES}`;
const HEADER_NAME_BAD = `key NOT GLOB '[A-Za-z0-9]*' OR key GLOB '*[^A-Za-z0-9_.-]*' OR ${bytes('key')} > ${MAX_HEADER_NAME_BYTES}`;
const HEADER_VALUE_BAD = `instr(value, char(13)) > 0 OR instr(value, char(10)) > 0 OR ${hasNul('value')} OR ${bytes('value')} > ${MAX_HEADER_VALUE_BYTES}`;
const TRACEPARENT = `json_extract(NEW.headers, '$.traceparent')`;

const refuse = (condition: string, message: string) => `    WHEN ${condition}\n      THEN RAISE(ABORT, '${message.replaceAll("'", "''")}')`;

/**
 * The checks of the table contract as one statement: the first rule of core/message-rules.ts the new row breaks
 * aborts it with the library's words. RAISE takes a literal (an expression only from SQLite 3.47, and every client
 * of the file parses these triggers), so SQLite's refusals name the rule but not the value at fault. `destination`:
 * with the destination rule (migration 4), else as migration 2 wrote them.
 */
function checks(destination: boolean): string {
  const withHeaders = `NEW.headers <> '{}' AND json_valid(NEW.headers) AND json_type(NEW.headers) = 'object'`;
  const anyHeader = (condition: string) => `${withHeaders} AND EXISTS (SELECT 1 FROM json_each(NEW.headers) WHERE ${condition})`;
  const traceparentBad = `json_type(NEW.headers, '$.traceparent') IS NOT NULL AND NOT (${traceparentSql(TRACEPARENT, `${TRACEPARENT} NOT GLOB '*[^0-9a-f-]*'`)})`;
  // The usual row passes on one pass over its headers (json_extract would parse the text again at each call); the
  // CASE below, which names the rule, runs only for the rest.
  const usual = `NOT (${idBad('NEW.id')} OR ${topicBad('NEW.topic')} OR ${textBad('NEW.type', MAX_TYPE_BYTES)}
      OR (NEW."key" IS NOT NULL AND (${textBad('NEW."key"', MAX_KEY_BYTES)}))${
        destination
          ? `
      OR (NEW.destination IS NOT NULL AND (${destinationBad('NEW.destination')}))`
          : ''
      })
    AND (NOT (${withHeaders}) OR (SELECT count(*) <= ${MAX_HEADERS} AND NOT coalesce(max(${HEADER_NAME_BAD} OR type <> 'text' OR ${HEADER_VALUE_BAD}
        OR (key = 'traceparent' AND NOT (${traceparentSql('value', `value NOT GLOB '*[^0-9a-f-]*'`)}))), 0)
      FROM json_each(NEW.headers)))`;
  return `  SELECT CASE
${[
  refuse(idBad('NEW.id'), `outbox id is invalid: ${MessageRules.id}`),
  refuse(topicBad('NEW.topic'), `outbox topic is invalid: ${MessageRules.topic}`),
  refuse(textBad('NEW.type', MAX_TYPE_BYTES), `outbox type is invalid: ${MessageRules.type}`),
  refuse(`NEW."key" IS NOT NULL AND (${textBad('NEW."key"', MAX_KEY_BYTES)})`, `outbox key is invalid: ${MessageRules.key}`),
  ...(destination
    ? [refuse(`NEW.destination IS NOT NULL AND (${destinationBad('NEW.destination')})`, `outbox destination is invalid: ${MessageRules.destination}`)]
    : []),
  refuse(`${withHeaders} AND (SELECT count(*) FROM json_each(NEW.headers)) > ${MAX_HEADERS}`, `outbox headers are invalid: ${MessageRules.headerCount}`),
  refuse(anyHeader(HEADER_NAME_BAD), `outbox header name is invalid: ${MessageRules.headerName}`),
  // The words of migration 1's trigger <t>_headers_are_strings, which refuses the same on insert.
  refuse(anyHeader(`type <> 'text'`), 'outbox headers must be a JSON object of string values'),
  refuse(anyHeader(HEADER_VALUE_BAD), `outbox header is invalid: ${MessageRules.headerValue}`),
  refuse(`${withHeaders} AND ${traceparentBad}`, `outbox header "traceparent" is invalid: ${MessageRules.traceparent}`),
].join('\n')}
  END
  WHERE NOT (${usual});`;
}

/**
 * Migration 2 of SQLite: the table refuses at INSERT what the library refuses at enqueue (core/message-rules.ts), in
 * its words: `BEFORE INSERT` and `BEFORE UPDATE OF id, topic, type, key, headers` triggers (a CHECK cannot be added to
 * an existing SQLite table, and would be tested again by every relay update of a row stored before). Rows stored
 * before stay as they are; the publishers park them dead, in the same words. Nothing is read or rewritten.
 */
export function tableContractSql(n: Pick<SqliteTableNames, 'table' | 'outbox'>): string {
  const trigger = (suffix: string) => quoteIdentifier(`${n.table}_${suffix}`);
  return `
CREATE TRIGGER IF NOT EXISTS ${trigger('contract_insert')} BEFORE INSERT ON ${n.outbox}
BEGIN
${checks(false)}
END;
CREATE TRIGGER IF NOT EXISTS ${trigger('contract_update')} BEFORE UPDATE OF id, topic, type, "key", headers ON ${n.outbox}
BEGIN
${checks(false)}
END;
`;
}

/**
 * Migration 4 of SQLite, fan-out (docs/design/fan-out.md), expand only: the nullable
 * `destination` column (NULL: the relay's own publisher), and the triggers of migration 2 again with the destination
 * rule in their statement and `UPDATE OF` list. Adding a nullable column without a default or a CHECK rewrites and
 * reads no row (SQLite edits the table's schema text); replacing the triggers reads none. The usual row (no
 * destination) costs one more `IS NOT NULL`. Rows stored before have no destination, so none breaks the rule.
 */
export function destinationMigrationSql(n: Pick<SqliteTableNames, 'table' | 'outbox'>): string {
  const trigger = (suffix: string) => quoteIdentifier(`${n.table}_${suffix}`);
  return `
${addColumnSql(n.table, 'destination', 'TEXT')}
DROP TRIGGER IF EXISTS ${trigger('contract_insert')};
CREATE TRIGGER ${trigger('contract_insert')} BEFORE INSERT ON ${n.outbox}
BEGIN
${checks(true)}
END;
DROP TRIGGER IF EXISTS ${trigger('contract_update')};
CREATE TRIGGER ${trigger('contract_update')} BEFORE UPDATE OF id, topic, type, "key", headers, destination ON ${n.outbox}
BEGIN
${checks(true)}
END;
`;
}
