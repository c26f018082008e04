import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncarnationRecord, JournalEvent } from './attribution.js';
import type { Delivery, LedgerRow, OutboxRow } from './checker.js';
import type { Environment } from './environment.js';
import { readJournal } from './journal.js';
import type { RelaySlot } from './relay-slot.js';

/** The committed truth and the end state of the outbox, from the database. */
export async function readDatabase(env: Environment): Promise<{ ledger: LedgerRow[]; outbox: OutboxRow[] }> {
  const ledger = await env.admin.query(`SELECT id::text AS id, key, version, kind, destination FROM "${env.schema}".ledger`);
  const outbox = await env.admin.query(`SELECT id::text AS id, state, (extract(epoch FROM dead_at) * 1000)::float8 AS dead_at FROM "${env.schema}".outbox`);
  return {
    ledger: ledger.rows as LedgerRow[],
    outbox: (outbox.rows as { id: string; state: string; dead_at: number | null }[]).map((r) => ({
      id: r.id,
      state: r.state,
      deadAt: r.dead_at === null ? null : Number(r.dead_at),
    })),
  };
}

export function readCommitTimes(paths: readonly string[]): Map<string, number> {
  const times = new Map<string, number>();
  for (const path of paths) {
    for (const record of readJournal<{ e: string; t: number; ids?: string[] }>(path)) {
      if (record.e === 'commit') for (const id of record.ids ?? []) times.set(id, record.t);
    }
  }
  return times;
}

export function countWriterFailures(paths: readonly string[]): number {
  return paths.reduce((sum, path) => sum + readJournal<{ e: string }>(path).filter((r) => r.e === 'failed').length, 0);
}

/** Every delivery the consumer journaled, with its destination (absent: `default`). */
export function readDeliveries(path: string): Delivery[] {
  return readJournal<{ e: string; t: number; id: string; r: boolean; to?: string }>(path)
    .filter((record) => record.e === 'd')
    .map(({ t, id, r, to }) => ({ t, id, r, ...(to === undefined ? {} : { to }) }));
}

export function readIncarnations(slots: readonly RelaySlot[]): IncarnationRecord[] {
  return slots.flatMap((slot) => slot.incarnations.map((i) => ({ name: i.name, exit: i.process.exit, events: readJournal<JournalEvent>(i.journal) })));
}

/** Every file of the run (role output, journals, reports) that contains the canary password. */
export function scanForCanary(dir: string, canary: string): string[] {
  const leaks: string[] = [];
  for (const name of readdirSync(dir)) {
    const text = readFileSync(join(dir, name), 'utf8');
    const count = text.split(canary).length - 1;
    if (count > 0) leaks.push(`${name}: ${count}`);
  }
  return leaks;
}
