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
  TRACEPARENT_PATTERN,
} from '../../core/message-rules.js';
import { quoteMysql, type MysqlTableNames } from './table-names.js';

/** A UUID as the library writes ids: lowercase hex. */
const ID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
/**
 * `^…$` as MariaDB (PCRE) and MySQL (ICU) must read it: their `$` also matches before a final line feed, so a topic
 * `orders\n` would pass; `(?s)…(?!.)` ends only at the end.
 */
const whole = (anchored: string) => `(?s)${anchored.slice(0, -1)}(?!.)`;
/** A control character, NUL included, built without a backslash (a string literal's backslashes depend on sql_mode). */
const CONTROL = `CONCAT('[', CHAR(0 USING utf8mb4), '-', CHAR(31 USING utf8mb4), CHAR(127 USING utf8mb4), ']') COLLATE utf8mb4_bin`;
const LINE_BREAK_OR_NUL = (value: string) =>
  `(LOCATE(CHAR(13 USING utf8mb4), ${value}) > 0 OR LOCATE(CHAR(10 USING utf8mb4), ${value}) > 0 OR LOCATE(CHAR(0 USING utf8mb4), ${value}) > 0)`;
const SEPARATOR = 'CHAR(1 USING utf8mb4)';
/** Before the destination in `fieldsOk`'s joined row: a control character other than SEPARATOR, so a key never reads as one. */
const DESTINATION_SEPARATOR = 'CHAR(2 USING utf8mb4)';
const TRACEPARENT_OK = `(JSON_UNQUOTE(JSON_EXTRACT(NEW.headers, '$.traceparent')) COLLATE utf8mb4_bin REGEXP '${whole(TRACEPARENT_PATTERN)}')`;
const sqlText = (text: string) => `'${text.replaceAll("'", "''")}'`;
const shown = (value: string) => `JSON_QUOTE(LEFT(${value}, ${QUOTED_CHARACTERS}))`;
const textBad = (value: string, maxBytes: number) => `(${value} = '' OR LENGTH(${value}) > ${maxBytes} OR ${value} REGEXP ${CONTROL})`;
/** The value of the header named by `name` (a name that passed its rule, so it needs no escaping in a path). */
const headerValue = (name: string) => `JSON_EXTRACT(NEW.headers, CONCAT('$."', ${name}, '"'))`;
/** The first header name (in document order) meeting `condition` of `k.name`, or NULL. */
const firstHeader = (condition: string) =>
  `(SELECT k.name FROM JSON_TABLE(JSON_KEYS(NEW.headers), '$[*]' COLUMNS (i FOR ORDINALITY, name TEXT PATH '$')) AS k WHERE ${condition} ORDER BY k.i LIMIT 1)`;

/**
 * The usual row passes on two expressions, evaluated as separate statements: in a trigger, MariaDB compiles every
 * REGEXP of a statement it runs again for each row, some µs each (measured on 10.11), whether the REGEXP is reached
 * or not; the checks one by one take a dozen statements and three JSON_TABLE queries. `fieldsOk` tests id, topic,
 * type and key with one pattern (joined by a control character none of them may hold). `headersOk` runs only for
 * headers other than `{}`: their text is a plain object of short names and short string values without escapes (as
 * JSON.stringify and JSON_OBJECT write them), at most ${MAX_HEADERS}, and a valid traceparent if any. A row that fails
 * either goes through the checks one by one, which decide. With `destination` (migration 4), the joined row ends
 * with the destination when there is one (after another control character), in the same pattern: a row pays no
 * REGEXP more for it.
 */
function fieldsOk(destination: boolean): string {
  const text = `[^', CHAR(0 USING utf8mb4), '-', CHAR(31 USING utf8mb4), CHAR(127 USING utf8mb4), ']+`;
  const named = destination ? `(?:', ${DESTINATION_SEPARATOR}, '${DESTINATION_PATTERN.slice(1, -1)})?` : '';
  const pattern = `CONCAT('(?s)^${ID_PATTERN.slice(1, -1)}', ${SEPARATOR}, '${TOPIC_PATTERN.slice(1, -1)}', ${SEPARATOR}, '${text}(?:', ${SEPARATOR}, '${text})?${named}(?!.)') COLLATE utf8mb4_bin`;
  const ofDestination = destination ? `, IF(NEW.destination IS NULL, '', CONCAT(${DESTINATION_SEPARATOR}, NEW.destination))` : '';
  const row = `CONCAT(NEW.id, ${SEPARATOR}, NEW.topic, ${SEPARATOR}, NEW.type, IF(NEW.\`key\` IS NULL, '', CONCAT(${SEPARATOR}, NEW.\`key\`))${ofDestination})`;
  const destinationBytes = destination ? ` AND (NEW.destination IS NULL OR LENGTH(NEW.destination) <= ${MAX_DESTINATION_BYTES})` : '';
  return `${row} REGEXP ${pattern}
    AND LENGTH(NEW.topic) <= ${MAX_TOPIC_BYTES} AND LENGTH(NEW.type) <= ${MAX_TYPE_BYTES} AND (NEW.\`key\` IS NULL OR LENGTH(NEW.\`key\`) <= ${MAX_KEY_BYTES})${destinationBytes}`;
}

function headersOk(): string {
  const name = `[A-Za-z0-9][A-Za-z0-9_.-]{0,${MAX_HEADER_NAME_BYTES - 1}}`;
  // at most 1024 characters, so at most 4096 bytes; no quote, backslash (an escape: `\\` in the class) or control character
  const value = `[^"', REPEAT(CHAR(92 USING utf8mb4), 2), CHAR(0 USING utf8mb4), '-', CHAR(31 USING utf8mb4), ']{0,1024}`;
  const member = `"${name}" *: *"${value}"`;
  // No traceparent member whose value is not a trace context (a value holds no quote here, so "traceparent" followed
  // by a colon is a name): the same pattern, so the usual row with headers pays one REGEXP more, not two.
  const traceparent = `(?!.*"traceparent" *: *"(?!${TRACEPARENT_PATTERN.slice(1, -1)}"))`;
  return `JSON_LENGTH(NEW.headers) <= ${MAX_HEADERS}
      AND NEW.headers REGEXP CONCAT('(?s)^${traceparent}[{] *${member}(?: *, *${member})* *[}](?!.)') COLLATE utf8mb4_bin`;
}

/** Headers this trigger looks at; headers that are no JSON object are the CHECK of migration 1's, refused in its words. */
const HEADERS_TO_CHECK = `NEW.headers <> '{}' AND JSON_VALID(NEW.headers) AND JSON_TYPE(NEW.headers) = 'OBJECT'`;

/** Sets `fault` to the first rule of core/message-rules.ts the new row breaks, in the library's words. */
function checks(destination: boolean): string {
  const set = (condition: string, message: string) => `  IF fault IS NULL AND ${condition} THEN SET fault = ${message}; END IF;`;
  const find = (condition: string) => `    IF fault IS NULL THEN SET bad = ${firstHeader(condition)}; END IF;`;
  const name = 'k.name COLLATE utf8mb4_bin';
  return [
    set(`NOT (NEW.id REGEXP '${whole(ID_PATTERN)}')`, `CONCAT('outbox id ', ${shown('NEW.id')}, ${sqlText(` is invalid: ${MessageRules.id}`)})`),
    set(
      `(NOT (NEW.topic REGEXP '${whole(TOPIC_PATTERN)}') OR LENGTH(NEW.topic) > ${MAX_TOPIC_BYTES})`,
      `CONCAT('outbox topic ', ${shown('NEW.topic')}, ${sqlText(` is invalid: ${MessageRules.topic}`)})`,
    ),
    set(textBad('NEW.type', MAX_TYPE_BYTES), `CONCAT('outbox type ', ${shown('NEW.type')}, ${sqlText(` is invalid: ${MessageRules.type}`)})`),
    set(`NEW.\`key\` IS NOT NULL AND ${textBad('NEW.`key`', MAX_KEY_BYTES)}`, sqlText(`outbox key is invalid: ${MessageRules.key}`)),
    // the destination after the key, as the library checks them (a NULL destination is the relay's own publisher)
    ...(destination
      ? [
          set(
            `NEW.destination IS NOT NULL AND (NOT (NEW.destination REGEXP '${whole(DESTINATION_PATTERN)}') OR LENGTH(NEW.destination) > ${MAX_DESTINATION_BYTES})`,
            `CONCAT('outbox destination ', ${shown('NEW.destination')}, ${sqlText(` is invalid: ${MessageRules.destination}`)})`,
          ),
        ]
      : []),
    // Headers that are no JSON object are refused by the CHECK <t>_headers_object_of_strings, in its words.
    `  IF fault IS NULL AND ${HEADERS_TO_CHECK} THEN`,
    `  ${set(`JSON_LENGTH(NEW.headers) > ${MAX_HEADERS}`, `CONCAT('outbox headers are invalid (', JSON_LENGTH(NEW.headers), ${sqlText(`): ${MessageRules.headerCount}`)})`)}`,
    find(`NOT (${name} REGEXP '${whole(HEADER_NAME_PATTERN)}') OR LENGTH(k.name) > ${MAX_HEADER_NAME_BYTES}`),
    `  ${set('bad IS NOT NULL', `CONCAT('outbox header name ', ${shown('bad')}, ${sqlText(` is invalid: ${MessageRules.headerName}`)})`)}`,
    find(`JSON_TYPE(${headerValue('k.name')}) <> 'STRING'`),
    `  ${set('bad IS NOT NULL', `CONCAT('outbox header ', ${shown('bad')}, ' must be a string; got a JSON ', CASE JSON_TYPE(${headerValue('bad')}) WHEN 'INTEGER' THEN 'number' WHEN 'DOUBLE' THEN 'number' ELSE LOWER(JSON_TYPE(${headerValue('bad')})) END)`)}`,
    find(`${LINE_BREAK_OR_NUL(`JSON_UNQUOTE(${headerValue('k.name')})`)} OR LENGTH(JSON_UNQUOTE(${headerValue('k.name')})) > ${MAX_HEADER_VALUE_BYTES}`),
    `  ${set('bad IS NOT NULL', `CONCAT('outbox header ', ${shown('bad')}, ${sqlText(` is invalid: ${MessageRules.headerValue}`)})`)}`,
    `  ${set(
      `JSON_CONTAINS_PATH(NEW.headers, 'one', '$.traceparent') AND NOT ${TRACEPARENT_OK}`,
      sqlText(`outbox header "traceparent" is invalid: ${MessageRules.traceparent}`),
    )}`,
    '  END IF;',
  ].join('\n');
}

/** MySQL 8 takes at most 128 characters of MESSAGE_TEXT (an error in strict mode); MariaDB 10.2+ takes 512. */
const SIGNAL = `  IF fault IS NOT NULL THEN
    SET fault = LEFT(fault, IF(VERSION() LIKE '%MariaDB%', 512, 128));
    SIGNAL SQLSTATE '23000' SET MESSAGE_TEXT = fault;
  END IF;`;

/** The checks one by one and the refusal, in a block of their own (its variables cost only when it runs). */
const CHECKED = (destination: boolean) => `    BEGIN
      DECLARE fault TEXT DEFAULT NULL;
      DECLARE bad TEXT DEFAULT NULL;
${checks(destination)}
${SIGNAL}
    END;`;

/** Lets the usual row through on two expressions, or checks it one rule at a time. */
const BODY = (destination: boolean) => `  IF (${fieldsOk(destination)}) IS NOT TRUE THEN
${CHECKED(destination)}
  ELSEIF ${HEADERS_TO_CHECK} THEN
    IF (${headersOk()}) IS NOT TRUE THEN
${CHECKED(destination)}
    END IF;
  END IF;`;

/**
 * Migration 2 of MariaDB/MySQL: the table refuses at INSERT what the library refuses at enqueue (core/message-rules.ts),
 * in its words: `BEFORE INSERT` and `BEFORE UPDATE` triggers that SIGNAL SQLSTATE 23000 with the rule broken. Triggers,
 * not CHECK constraints: MariaDB tests a new CHECK against every existing row (the ALTER would fail on a table holding
 * one that breaks it) and again on every update of a row (a relay could then not even park such a row). Rows stored
 * before stay as they are; the publishers park them dead, in the same words. The update trigger checks only a row
 * whose id, topic, type, key or headers change: the relay's own updates pass untouched. The insert trigger runs after
 * `<t>_headers_are_strings`, so a header value that is not a string is still refused by the CHECK of migration 1.
 */
export function tableContractStatements(n: Pick<MysqlTableNames, 'table' | 'outbox'>): readonly string[] {
  return contractTriggers(n, 'contract', false);
}

/**
 * Migration 4's half of the contract (docs/design/fan-out.md): the same two triggers with
 * the destination rule (core/message-rules.ts; NULL, the relay's own publisher, passes), and the update trigger
 * also checking a row whose destination changes. The usual row pays no REGEXP more (see `fieldsOk`). MySQL has no
 * `CREATE OR REPLACE TRIGGER` and commits each DDL statement at once, so the triggers are replaced without a moment
 * unchecked: the new ones under other names (`<t>_contract_next_*`) first, then the old dropped and created again
 * with the new body under their own names, then the others dropped. Every step is `IF [NOT] EXISTS`: the script runs
 * twice, and a migration cut short runs again whole (migration 2's `CREATE TRIGGER IF NOT EXISTS` finds these).
 */
export function destinationContractStatements(n: Pick<MysqlTableNames, 'database' | 'table' | 'outbox'>): readonly string[] {
  // a trigger lives in its table's database: named with it, as the table is (the default database otherwise)
  const drop = (suffix: string) => `DROP TRIGGER IF EXISTS ${n.database === null ? '' : `${quoteMysql(n.database)}.`}${quoteMysql(`${n.table}_${suffix}`)}`;
  return [
    ...contractTriggers(n, 'contract_next', true),
    drop('contract_insert'),
    drop('contract_update'),
    ...contractTriggers(n, 'contract', true),
    drop('contract_next_insert'),
    drop('contract_next_update'),
  ];
}

/** The insert and update triggers `<t>_<name>_insert` and `<t>_<name>_update`; `destination`: with the destination rule. */
function contractTriggers(n: Pick<MysqlTableNames, 'table' | 'outbox'>, name: string, destination: boolean): readonly string[] {
  const trigger = (suffix: string) => quoteMysql(`${n.table}_${suffix}`);
  const columns = ['id', 'topic', 'type', '`key`', 'headers', ...(destination ? ['destination'] : [])];
  const changed = columns.map((c) => `NOT (NEW.${c} <=> OLD.${c})`).join(' OR ');
  return [
    `CREATE TRIGGER IF NOT EXISTS ${trigger(`${name}_insert`)} BEFORE INSERT ON ${n.outbox} FOR EACH ROW FOLLOWS ${trigger('headers_are_strings')}
BEGIN
${BODY(destination)}
END`,
    `CREATE TRIGGER IF NOT EXISTS ${trigger(`${name}_update`)} BEFORE UPDATE ON ${n.outbox} FOR EACH ROW
BEGIN
  IF ${changed} THEN
${BODY(destination)}
  END IF;
END`,
  ];
}
