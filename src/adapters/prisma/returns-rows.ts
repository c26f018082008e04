import type { SqlDialect } from '../../core/ports/outbox-transaction.js';

/** Leading keywords of a statement that answers with rows. */
const ROW_STATEMENTS = new Set(['select', 'values', 'table', 'show', 'explain', 'describe', 'desc', 'pragma']);
/** The keywords that can start the statement a `WITH` clause leads to. */
const MAIN_STATEMENTS = new Set(['select', 'values', 'table', 'insert', 'update', 'delete', 'merge', 'replace']);

/**
 * Whether a statement answers with rows (a query, or a write with a top-level RETURNING): Prisma reads rows
 * (`$queryRawUnsafe`) and counts changed rows (`$executeRawUnsafe`) through two different calls, never both.
 * Comments, string literals and quoted identifiers are skipped, so a word inside them does not count.
 */
export function returnsRows(sql: string, dialect: SqlDialect): boolean {
  const words = topLevelWords(sql, dialect);
  const first = words[0];
  if (first === undefined) return false;
  if (first === '(') return true; // a parenthesized query: (SELECT ...) UNION (SELECT ...)
  if (words.includes('returning')) return true;
  if (first === 'with') return ROW_STATEMENTS.has(words.find((word) => MAIN_STATEMENTS.has(word)) ?? '');
  return ROW_STATEMENTS.has(first);
}

/**
 * The words outside parentheses, lower-cased, in order (a leading `(` kept as a word of its own); comments,
 * literals and quoted names skipped in the dialect's own rules.
 */
function topLevelWords(sql: string, dialect: SqlDialect): string[] {
  const words: string[] = [];
  let depth = 0;
  let i = 0;
  while (i < sql.length) {
    const char = sql[i] ?? '';
    const next = sql[i + 1] ?? '';
    if (char === '-' && next === '-') i = lineEnd(sql, i);
    else if (char === '#' && dialect === 'mysql') i = lineEnd(sql, i);
    else if (char === '/' && next === '*') i = blockCommentEnd(sql, i);
    else if (char === "'") i = quotedEnd(sql, i, "'", dialect === 'mysql' || isEscapeString(sql, i, dialect));
    else if (char === '"') i = quotedEnd(sql, i, '"', dialect === 'mysql');
    else if (char === '`' && dialect !== 'postgres') i = quotedEnd(sql, i, '`', false);
    else if (char === '[' && dialect === 'sqlite') i = closingBracket(sql, i);
    else if (char === '$' && dialect === 'postgres' && dollarTag(sql, i) !== null) i = dollarQuotedEnd(sql, i, dollarTag(sql, i) ?? '$$');
    else if (char === '(') {
      if (words.length === 0 && depth === 0) words.push('(');
      depth += 1;
      i += 1;
    } else if (char === ')') {
      depth = Math.max(0, depth - 1);
      i += 1;
    } else if (/[A-Za-z_]/.test(char)) {
      const start = i;
      while (i < sql.length && /[A-Za-z0-9_$]/.test(sql[i] ?? '')) i += 1;
      if (depth === 0) words.push(sql.slice(start, i).toLowerCase());
    } else i += 1;
  }
  return words;
}

function lineEnd(sql: string, from: number): number {
  const end = sql.indexOf('\n', from);
  return end < 0 ? sql.length : end + 1;
}

function blockCommentEnd(sql: string, from: number): number {
  const end = sql.indexOf('*/', from + 2);
  return end < 0 ? sql.length : end + 2;
}

/** PostgreSQL's E'...' strings take backslash escapes; its standard strings do not. */
function isEscapeString(sql: string, quote: number, dialect: SqlDialect): boolean {
  return dialect === 'postgres' && /[Ee]/.test(sql[quote - 1] ?? '') && !/[A-Za-z0-9_]/.test(sql[quote - 2] ?? '');
}

/** The index after a quoted run that ends with `quote` (doubled inside it, or backslash-escaped where allowed). */
function quotedEnd(sql: string, from: number, quote: string, backslashEscapes: boolean): number {
  let i = from + 1;
  while (i < sql.length) {
    const char = sql[i];
    if (backslashEscapes && char === '\\') i += 2;
    else if (char === quote && sql[i + 1] === quote) i += 2;
    else if (char === quote) return i + 1;
    else i += 1;
  }
  return sql.length;
}

function closingBracket(sql: string, from: number): number {
  const end = sql.indexOf(']', from + 1);
  return end < 0 ? sql.length : end + 1;
}

/** `$$` or `$tag$` opening a dollar-quoted string (`$1`, a placeholder, is not one). */
function dollarTag(sql: string, from: number): string | null {
  return /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(from, from + 64))?.[0] ?? null;
}

function dollarQuotedEnd(sql: string, from: number, tag: string): number {
  const end = sql.indexOf(tag, from + tag.length);
  return end < 0 ? sql.length : end + tag.length;
}
