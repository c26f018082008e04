/** Plain-text rendering for terminals. Machine output (`--json`) never goes through here. */
import { escapeUnprintable } from '../../core/printable.js';

/**
 * Makes a stored value safe to print on a terminal: control characters (ANSI escapes a producer
 * may have put in a topic or an error text) and bidi overrides become visible escapes, whitespace runs one space, bounded.
 */
export function printable(value: string, maxLength = 120): string {
  const text = escapeUnprintable(value.replace(/\s+/g, ' '));
  return text.length > maxLength ? `${text.slice(0, maxLength - 1)}…` : text;
}

/** Left-aligned columns separated by two spaces; numeric columns right-aligned. */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[], numeric: ReadonlySet<number> = new Set()): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => {
        const width = widths[column] ?? cell.length;
        return numeric.has(column) ? cell.padStart(width) : cell.padEnd(width);
      })
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** `95` → `1m 35s`; whole seconds, for people. */
export function humanDuration(seconds: number): string {
  let rest = Math.floor(seconds);
  const days = Math.floor(rest / 86_400);
  rest -= days * 86_400;
  const hours = Math.floor(rest / 3600);
  rest -= hours * 3600;
  const minutes = Math.floor(rest / 60);
  rest -= minutes * 60;
  const parts = [days > 0 ? `${days}d` : '', hours > 0 ? `${hours}h` : '', minutes > 0 ? `${minutes}m` : '', `${rest}s`];
  return parts
    .filter((part) => part !== '')
    .slice(0, 3)
    .join(' ');
}
