import { readJournalTail } from '../journal.js';
import type { Incarnation } from '../relay-slot.js';
import type { FaultContext } from '../scenario.js';

const WRITES = new Set(['mark', 'markFailed', 'release']);

/**
 * Whether a relay's journal shows a claim (a read of a partition) that no mark or failure has answered
 * yet. A targeting hint for fault schedules, read from the journal's tail; never a verdict.
 */
export function holdsClaim(journal: string): boolean {
  const open = new Set<string>();
  for (const record of readJournalTail<{ e: string; tok?: string }>(journal, 32_768)) {
    if (record.tok === undefined) continue;
    if (record.e === 'claim') open.add(record.tok);
    else if (WRITES.has(record.e)) open.delete(record.tok);
  }
  return open.size > 0;
}

/**
 * Waits (at most `boundMs`) until `victim` holds a claim, so that a fault lands mid-batch: a busy relay
 * claims, publishes and marks within tens of milliseconds, and a fault at a random moment mostly finds it
 * between batches. False if it held none in time (the fault goes ahead anyway).
 */
export async function awaitHolding(ctx: FaultContext, victim: Incarnation, boundMs: number): Promise<boolean> {
  const deadline = Date.now() + boundMs;
  while (Date.now() < deadline && victim.process.running) {
    if (holdsClaim(victim.journal)) return true;
    await ctx.sleep(2);
  }
  return false;
}
