import { quoteIdentifier, validateIdentifier } from '../../core/identifiers.js';

/**
 * SQLite has no `ADD COLUMN IF NOT EXISTS`, and a plain `ALTER TABLE ... ADD COLUMN` fails on a second run. A
 * migration therefore adds a column only through `addColumnSql`, one statement on a line of its own, which the
 * runner and the `outboxer sql` script recognise (`migrationSegments`) and run only where the column is missing:
 * - the runner (`applySqliteMigrations`, inside its `BEGIN IMMEDIATE`) looks the column up first, so a column a
 *   script cut short (or a hand) already added does not fail the migration;
 * - the script, which must stay safe to apply twice, adds it through `addColumnScript`.
 */
const ADD_COLUMN = /^ALTER TABLE "([A-Za-z_][A-Za-z0-9_]*)" ADD COLUMN ([A-Za-z_][A-Za-z0-9_]*) ([^;\n]+);$/gm;

/** `ALTER TABLE "<table>" ADD COLUMN <column> <definition>;`: no `;` or line break in the definition. */
export function addColumnSql(table: string, column: string, definition: string): string {
  validateIdentifier(table, 'table');
  validateIdentifier(column, 'column');
  if (/[;\n]/.test(definition)) throw new Error(`a column definition of a migration is one line without ';': ${definition}`);
  return `ALTER TABLE ${quoteIdentifier(table)} ADD COLUMN ${column} ${definition};`;
}

/** A part of a migration's SQL: plain statements, or one column to add where it is missing. */
export type MigrationSegment =
  | { readonly kind: 'sql'; readonly sql: string }
  | { readonly kind: 'addColumn'; readonly table: string; readonly column: string; readonly definition: string; readonly statement: string };

/** The migration's SQL cut around its `addColumnSql` statements, in order. */
export function migrationSegments(sql: string): MigrationSegment[] {
  const segments: MigrationSegment[] = [];
  let from = 0;
  for (const match of sql.matchAll(ADD_COLUMN)) {
    const [statement, table = '', column = '', definition = ''] = match;
    segments.push({ kind: 'sql', sql: sql.slice(from, match.index) });
    segments.push({ kind: 'addColumn', table, column, definition, statement });
    from = match.index + statement.length;
  }
  segments.push({ kind: 'sql', sql: sql.slice(from) });
  return segments.filter((segment) => segment.kind !== 'sql' || segment.sql.trim() !== '');
}

/** SQL true when the table exists in the main database and has the column. */
export function columnPresentSql(table: string, column: string): string {
  return `EXISTS (SELECT 1 FROM pragma_table_info('${table}', 'main') WHERE name = '${column}')`;
}

/** The schema name the script attaches for one added column (detached again at once). */
const TARGET = 'outboxer_add_column';

/**
 * The script's statements for one added column, run outside a transaction (ATTACH cannot run inside one). The
 * target of the `ALTER` is chosen by data, the one thing plain SQL can choose: `ATTACH` takes expressions, so the
 * file itself is attached under `outboxer_add_column` when its table lacks the column, and an empty database in
 * memory otherwise (also when the table is missing, or the database is in memory: then nothing is added, and the
 * migration is not recorded). The `CREATE TABLE IF NOT EXISTS` gives the in-memory target a table to alter, and is
 * a no-op on the file, whose table exists.
 */
export function addColumnScript(segment: Extract<MigrationSegment, { kind: 'addColumn' }>): string[] {
  const { table, column, definition } = segment;
  const tableExists = `EXISTS (SELECT 1 FROM pragma_table_info('${table}', 'main'))`;
  return [
    `ATTACH (CASE WHEN ${tableExists} AND NOT ${columnPresentSql(table, column)}
  THEN (SELECT file FROM pragma_database_list WHERE name = 'main') ELSE ':memory:' END) AS ${TARGET};`,
    `CREATE TABLE IF NOT EXISTS ${TARGET}.${quoteIdentifier(table)} (outboxer_placeholder INTEGER);`,
    `ALTER TABLE ${TARGET}.${quoteIdentifier(table)} ADD COLUMN ${column} ${definition};`,
    `DETACH ${TARGET};`,
  ];
}
