import type { Logger } from './ports.js';

const noop = (): void => undefined;

/** The default: the library says nothing unless given a logger (pino fits as it is). */
export const silentLogger: Logger = Object.freeze({ debug: noop, info: noop, warn: noop, error: noop });

type Level = 'debug' | 'info' | 'warn' | 'error';
const LEVELS: readonly Level[] = ['debug', 'info', 'warn', 'error'];

/** A dependency-free JSON-lines logger on stderr, used by the CLI when no other logger is wired in. */
export function createJsonLogger(minimum: Level = 'info', write: (line: string) => void = (line) => process.stderr.write(line)): Logger {
  const threshold = LEVELS.indexOf(minimum);
  const make = (level: Level) => (fields: Record<string, unknown>, message: string) => {
    if (LEVELS.indexOf(level) < threshold) return;
    write(`${JSON.stringify({ ...fields, time: new Date().toISOString(), level, msg: message })}\n`);
  };
  return Object.freeze({ debug: make('debug'), info: make('info'), warn: make('warn'), error: make('error') });
}
