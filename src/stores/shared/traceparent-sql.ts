/**
 * core/message-rules.ts's TRACEPARENT_PATTERN as a SQL condition, for databases whose regular expressions are slow at
 * it (PostgreSQL: its bounded repeats and lookaheads cost some 20 µs a row) or missing (SQLite). `hexOrDash` says, in
 * the dialect's words, that `value` holds only `0-9a-f` and `-`; the rest fixes the length, where the three dashes
 * are, and the forbidden version and all-zero ids. Uses only what both dialects share (`length`, `replace`, `substr`).
 */
export function traceparentSql(value: string, hexOrDash: string): string {
  return `${hexOrDash} AND length(${value}) = 55 AND length(replace(${value}, '-', '')) = 52 AND substr(${value}, 3, 1) = '-'
      AND substr(${value}, 36, 1) = '-' AND substr(${value}, 53, 1) = '-' AND substr(${value}, 1, 2) <> 'ff'
      AND substr(${value}, 4, 32) <> '${'0'.repeat(32)}' AND substr(${value}, 37, 16) <> '${'0'.repeat(16)}'`;
}
