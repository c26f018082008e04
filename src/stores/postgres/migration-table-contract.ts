import { quoteIdentifier } from '../../core/identifiers.js';
import {
  DESTINATION_PATTERN,
  HEADER_NAME_PATTERN,
  MAX_HEADER_NAME_BYTES,
  MAX_HEADER_VALUE_BYTES,
  MAX_DESTINATION_BYTES,
  MAX_HEADERS,
  MAX_KEY_BYTES,
  MAX_TOPIC_BYTES,
  MAX_TYPE_BYTES,
  MessageRules,
  QUOTED_CHARACTERS,
  TOPIC_PATTERN,
} from '../../core/message-rules.js';
import { traceparentSql } from '../shared/traceparent-sql.js';
import type { TableName } from './sql.js';

/**
 * A control character (PostgreSQL text cannot hold NUL). Literals with a backslash are E'' literals: the function's
 * body is parsed again in each writer's session, where standard_conforming_strings may be off.
 */
const CONTROL = `E'[\\\\x01-\\\\x1f\\\\x7f]'`;
/** `value` as the library's messages quote it: JSON text of its first characters. */
const shown = (value: string) => `to_json(left(${value}, ${QUOTED_CHARACTERS}))`;
const raise = (message: string, ...args: string[]) =>
  `RAISE EXCEPTION '${message.replaceAll("'", "''")}'${args.map((a) => `, ${a}`).join('')} USING ERRCODE = 'check_violation', HINT = 'docs/table.md lists the rules of the table';`;

const topicBad = (topic: string) => `${topic} !~ '${TOPIC_PATTERN}' OR octet_length(${topic}) > ${MAX_TOPIC_BYTES}`;
const traceparentOk = (value: string) => traceparentSql(value, `${value} ~ '^[0-9a-f-]+$'`);
/** A header name inside the JSON array of names (HEADER_NAME_PATTERN without its anchors). */
const NAME = HEADER_NAME_PATTERN.slice(1, -1);
const textBad = (value: string, maxBytes: number) => `${value} = '' OR octet_length(${value}) > ${maxBytes} OR ${value} ~ ${CONTROL}`;
/** A named destination (NULL, the relay's own publisher, is always fine): ASCII only, so the pattern bounds it too. */
const destinationBad = (destination: string) =>
  `${destination} IS NOT NULL AND (${destination} !~ '${DESTINATION_PATTERN}' OR octet_length(${destination}) > ${MAX_DESTINATION_BYTES})`;

/**
 * True for the usual headers, in one expression over the whole object (the function's quick test before its loop):
 * a short JSON array of valid names (so each at most ${MAX_HEADER_NAME_BYTES} bytes, and fewer than ${MAX_HEADERS} of
 * them), a JSON text short enough that no value can pass ${MAX_HEADER_VALUE_BYTES} bytes, no CR or LF escape in it,
 * string values only, and a valid traceparent if any. False (or NULL) sends the row through the loop, header by
 * header, which decides (a false alarm, such as a backslash followed by an n, is let through there).
 */
function headersLookUsual(h: string): string {
  const names = `jsonb_path_query_array(${h}, '$.keyvalue().key')::text`;
  const text = `${h}::text`;
  const traceparent = `(${h} ->> 'traceparent')`;
  return `octet_length(${names}) <= ${MAX_HEADER_NAME_BYTES + 4} AND ${names} ~ E'^\\\\["${NAME}"(?:, "${NAME}")*\\\\]$'
      AND octet_length(${text}) <= ${MAX_HEADER_VALUE_BYTES + 4} AND strpos(${text}, E'\\\\r') = 0 AND strpos(${text}, E'\\\\n') = 0
      AND NOT jsonb_path_exists(${h}, '$.* ? (@.type() != "string")')
      AND (NOT ${h} ? 'traceparent' OR (${traceparentOk(traceparent)}))`;
}

/**
 * Migration 10: the table refuses at INSERT what the library refuses at enqueue (core/message-rules.ts), with
 * the same words: the topic, type and key rules and the header rules (names, values, count, traceparent). A
 * `BEFORE INSERT OR UPDATE OF topic, type, key, headers` trigger, not CHECK constraints: rows stored before it
 * are left as they are (a CHECK would be tested again by every relay update of such a row, which could then not
 * even be parked), and the publishers park those dead with the same words (core/stored-message-check.ts).
 * Expand only and cheap on a table of any size: one function and one trigger, no row is read or rewritten.
 * The trigger has no `WHEN` clause (migration 15, `contractTriggerMigration`).
 */
export function tableContractMigration(name: TableName): string {
  return contractSql(name, false);
}

/**
 * Migration 15: the contract's trigger without its `WHEN` clause; the function, which decides alone, makes the same
 * checks, with the usual headers' quick test (`headersLookUsual`) moved in from the clause as its first step for
 * headers. A trigger's `WHEN` clause is read back from the catalog and compiled again for every statement that fires it: with the whole contract in it,
 * that cost a one-row INSERT about 90 µs of the backend's CPU, a quarter of a one-enqueue transaction's, where
 * running the PL/pgSQL function on the row costs almost nothing (its plans are cached for the session).
 * `scripts/contract-trigger-cost.ts` measures it. Expand only, like 10: one function and one trigger replaced.
 */
export function contractTriggerMigration(name: TableName): string {
  return contractSql(name, true);
}

/**
 * Migration 12, fan-out (docs/design/fan-out.md), expand only: the nullable
 * `destination` column (NULL: the relay's own publisher), and the contract of migration 10 again with the
 * destination rule (core/message-rules.ts) in its function and its `UPDATE OF` list. Adding a nullable column
 * without a default rewrites no row, and replacing the function and the trigger reads none; the usual row (no
 * destination) costs one more `IS NOT NULL`. Rows stored before have no destination, so none breaks the rule.
 */
export function destinationMigration(name: TableName): string {
  const t = `${quoteIdentifier(name.schema)}.${quoteIdentifier(name.table)}`;
  return `
ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS destination text;
${contractSql(name, true).trim()}
`;
}

/** The contract's function and trigger; `destination`: with the destination rule (migration 12), else as migration 10 wrote it. */
function contractSql(name: TableName, destination: boolean): string {
  const s = quoteIdentifier(name.schema);
  const t = `${s}.${quoteIdentifier(name.table)}`;
  const trigger = quoteIdentifier(`${name.table}_contract`);
  return `
CREATE OR REPLACE FUNCTION ${s}.outboxer_check_message() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
  header_count bigint;
  entry record;
BEGIN
  IF ${topicBad('NEW.topic')} THEN
    ${raise(`outbox topic % is invalid: ${MessageRules.topic}`, shown('NEW.topic'))}
  END IF;
  IF ${textBad('NEW.type', MAX_TYPE_BYTES)} THEN
    ${raise(`outbox type % is invalid: ${MessageRules.type}`, shown('NEW.type'))}
  END IF;
  IF NEW.key IS NOT NULL AND (${textBad('NEW.key', MAX_KEY_BYTES)}) THEN
    ${raise(`outbox key is invalid: ${MessageRules.key}`)}
  END IF;${
    destination
      ? `
  IF ${destinationBad('NEW.destination')} THEN
    ${raise(`outbox destination % is invalid: ${MessageRules.destination}`, shown('NEW.destination'))}
  END IF;`
      : ''
  }
  IF NEW.headers = '{}'::jsonb OR jsonb_typeof(NEW.headers) IS DISTINCT FROM 'object' THEN
    RETURN NEW; -- not an object: the CHECK of migration 5 refuses it in its words
  END IF;
  IF ${headersLookUsual('NEW.headers')} THEN
    RETURN NEW;
  END IF;
  header_count := (SELECT count(*) FROM jsonb_object_keys(NEW.headers));
  IF header_count > ${MAX_HEADERS} THEN
    ${raise(`outbox headers are invalid (%): ${MessageRules.headerCount}`, 'header_count')}
  END IF;
  FOR entry IN SELECT key, value, jsonb_typeof(value) AS kind FROM jsonb_each(NEW.headers) LOOP
    IF entry.key !~ '${HEADER_NAME_PATTERN}' OR octet_length(entry.key) > ${MAX_HEADER_NAME_BYTES} THEN
      ${raise(`outbox header name % is invalid: ${MessageRules.headerName}`, shown('entry.key'))}
    END IF;
    IF entry.kind <> 'string' THEN
      RAISE EXCEPTION 'outbox header % must be a string; got a JSON %', ${shown('entry.key')}, entry.kind
        USING ERRCODE = 'check_violation',
          HINT = 'pass text values (to_jsonb(x::text)); drop unset ones with jsonb_strip_nulls(jsonb_build_object(...))';
    END IF;
    IF entry.value #>> '{}' ~ E'[\\\\r\\\\n]' OR octet_length(entry.value #>> '{}') > ${MAX_HEADER_VALUE_BYTES} THEN
      ${raise(`outbox header % is invalid: ${MessageRules.headerValue}`, shown('entry.key'))}
    END IF;
    IF entry.key = 'traceparent' AND NOT (${traceparentOk("entry.value #>> '{}'")}) THEN
      ${raise(`outbox header "traceparent" is invalid: ${MessageRules.traceparent}`)}
    END IF;
  END LOOP;
  RETURN NEW;
END
$fn$;
DROP TRIGGER IF EXISTS ${trigger} ON ${t};
CREATE TRIGGER ${trigger} BEFORE INSERT OR UPDATE OF topic, type, key, headers${destination ? ', destination' : ''} ON ${t} FOR EACH ROW
  EXECUTE FUNCTION ${s}.outboxer_check_message();
`;
}
