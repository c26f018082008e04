/**
 * A DATETIME(6) column (UTC, written with `UTC_TIMESTAMP(6)`) as ISO-8601 text, so reading it depends on neither
 * the pool's `timezone` nor its `dateStrings` setting.
 */
export function isoTime(column: string): string {
  return `DATE_FORMAT(${column}, '%Y-%m-%dT%H:%i:%s.%fZ')`;
}

/** Seconds from a DATETIME(6) column to now on the database clock (microsecond arithmetic, a DOUBLE). */
export function secondsSince(column: string): string {
  return `TIMESTAMPDIFF(MICROSECOND, ${column}, UTC_TIMESTAMP(6)) / 1e6`;
}
