import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';

/**
 * An append-only JSON-lines file written synchronously, line by line, so that what a process wrote
 * before a SIGKILL is on disk. Roles record facts here (commits, sends, confirms, marks, deliveries);
 * the checker counts them. Nothing in a journal is a log message to be read by a person.
 */
export class Journal {
  readonly #fd: number;

  constructor(readonly path: string) {
    this.#fd = openSync(path, 'a');
  }

  write(record: Record<string, unknown>): void {
    writeSync(this.#fd, `${JSON.stringify({ t: Date.now(), ...record })}\n`);
  }

  close(): void {
    closeSync(this.#fd);
  }
}

/** Every complete record of a journal (a line cut short by a kill is skipped). */
export function readJournal<T = Record<string, unknown>>(path: string): T[] {
  if (!existsSync(path)) return [];
  return parseLines<T>(readFileSync(path, 'utf8').split('\n'));
}

/** The complete records among the last `bytes` of a journal: cheap enough to poll a busy relay's. */
export function readJournalTail<T = Record<string, unknown>>(path: string, bytes: number): T[] {
  if (!existsSync(path)) return [];
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - bytes);
    const buffer = Buffer.alloc(size - start);
    readSync(fd, buffer, 0, buffer.length, start);
    const lines = buffer.toString('utf8').split('\n');
    return parseLines<T>(start > 0 ? lines.slice(1) : lines);
  } finally {
    closeSync(fd);
  }
}

function parseLines<T>(lines: readonly string[]): T[] {
  const records: T[] = [];
  for (const line of lines) {
    if (line === '') continue;
    try {
      records.push(JSON.parse(line) as T);
    } catch {
      // the last line of a killed process may be torn
    }
  }
  return records;
}
