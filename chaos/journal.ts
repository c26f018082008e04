import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';

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
  const records: T[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line === '') continue;
    try {
      records.push(JSON.parse(line) as T);
    } catch {
      // the last line of a killed process may be torn
    }
  }
  return records;
}
