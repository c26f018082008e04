const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Escapes control and bidirectional-override characters as `\uXXXX`, so text that came from the
 * database (plain-SQL rows skip enqueue validation) can never drive a terminal or disguise itself.
 */
export function escapeUnprintable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
