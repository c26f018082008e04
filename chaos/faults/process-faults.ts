import { readJournal } from '../journal.js';
import { poll } from '../poll.js';
import type { FaultContext } from '../scenario.js';
import type { Incarnation, RelaySlot } from '../relay-slot.js';
import { awaitHolding } from './holding.js';

/** A running relay chosen by the seeded PRNG (undefined if none is up right now). */
export function pickRelay(ctx: FaultContext): Incarnation | undefined {
  const running = ctx.slots.map((slot) => slot.current).filter((i): i is Incarnation => i !== undefined);
  return running.length === 0 ? undefined : ctx.prng.pick(running);
}

/** SIGKILL of a random relay: its leases must expire and another relay must take over. */
export function killRandomRelay(ctx: FaultContext): void {
  const victim = pickRelay(ctx);
  if (victim === undefined) return;
  ctx.log.begin('sigkill', { target: victim.name });
  victim.process.signal('SIGKILL');
}

/**
 * SIGSTOP past the lease, then SIGCONT: the zombie wakes up believing it holds its claim; its marks
 * must be fenced, and what it publishes late may only be a copy, never an inversion. `midBatch`: first
 * wait (up to 3 s) until the victim holds a claim.
 */
export async function pauseRelay(ctx: FaultContext, pauseMs: number, options: { readonly midBatch?: boolean } = {}): Promise<void> {
  const victim = pickRelay(ctx);
  if (victim === undefined) return;
  const holding = options.midBatch === true && (await awaitHolding(ctx, victim, 3000));
  const fault = ctx.log.begin(holding ? 'sigstop-zombie-mid-batch' : 'sigstop-zombie', { target: victim.name });
  victim.process.signal('SIGSTOP');
  await ctx.sleep(pauseMs);
  victim.process.signal('SIGCONT');
  ctx.log.heal(fault);
}

/** SIGTERM while publishing: the graceful stop confirms and marks what it sent, releases the rest; no copies allowed. */
export async function sigtermRelay(ctx: FaultContext): Promise<void> {
  const victim = pickRelay(ctx);
  if (victim === undefined) return;
  const fault = ctx.log.begin('sigterm', { target: victim.name, mayDuplicate: false });
  victim.process.signal('SIGTERM');
  await victim.process.exited;
  ctx.log.heal(fault);
}

/**
 * A relay joins in `slot`; resolves once it runs (a node process takes seconds to start on a busy machine,
 * and a relay stopped before it ran would not have joined at all).
 */
export async function joinRelay(slot: RelaySlot): Promise<void> {
  const joined = slot.join();
  await poll(() => !joined.process.running || readJournal(joined.journal).some((r) => r.e === 'running'), 30_000, `${joined.name} to run`, 100);
}

/**
 * The relay of `slot` leaves for good. SIGTERM: a graceful stop, no copy allowed. SIGKILL, once it holds
 * a claim (waited for up to 3 s): what it had claimed waits out its lease, then a survivor publishes it
 * again (copies within the budget). Joins are not faults: a relay that starts claims only free rows.
 */
export async function leaveRelay(ctx: FaultContext, slot: RelaySlot, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  const victim = slot.current;
  if (victim === undefined) return;
  const midBatch = signal === 'SIGKILL' && (await awaitHolding(ctx, victim, 3000));
  const fault = ctx.log.begin(`leave-${signal.toLowerCase()}${midBatch ? '-mid-batch' : ''}`, { target: victim.name, mayDuplicate: signal === 'SIGKILL' });
  await slot.leave(signal);
  ctx.log.heal(fault);
}
