import { expect, it } from 'vitest';
import type { OutboxMessageInput } from '../../src/core/message.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';

/**
 * An enqueue the caller did not await, then a rollback: the adapter's `status()` answered while the transaction was
 * open, the ROLLBACK went to the connection after that, and the enqueue's statements after the ROLLBACK would run
 * outside any transaction and commit on their own. The sweep puts the rollback after each number of microtask turns
 * from 0 to ROLLBACK_TURNS (nothing but microtasks runs between two turns, so each placement is reproducible), which
 * lands it before, between and after the enqueue's own steps (its status read, each statement's hand-over).
 */
export const ROLLBACK_TURNS = 40;

export interface FloatingEnqueueRig {
  readonly outbox: {
    enqueue(tx: OutboxTransaction, message: OutboxMessageInput): Promise<string>;
    enqueueMany(tx: OutboxTransaction, messages: readonly OutboxMessageInput[]): Promise<string[]>;
  };
  /** Messages in the outbox table, read outside any transaction. */
  rowCount(): Promise<number>;
  /**
   * Runs one transaction of the ORM: inside it, first thing, `enqueue(adapterHandle)` (which does not await the
   * enqueue), then `turns` microtask turns, then a rollback (how depends on the case: a throw from the callback, a
   * raw ROLLBACK). Resolves once the ORM settled the transaction, whatever its outcome.
   */
  rollBackAfter(turns: number, enqueue: (tx: OutboxTransaction) => void): Promise<void>;
  /** Runs `work` in a transaction of the ORM that commits. */
  commit(work: (tx: OutboxTransaction) => Promise<unknown>): Promise<unknown>;
}

export async function microtaskTurns(turns: number): Promise<void> {
  for (let turn = 0; turn < turns; turn += 1) await Promise.resolve();
}

const floatingMessage = (turns: number, idempotencyKey: string | undefined): OutboxMessageInput => ({
  topic: 'floating',
  type: 'floating.enqueue',
  key: `floating-${turns}`,
  payload: { turns },
  ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
});

/**
 * Sweeps the rollback across the enqueue and asserts that no message committed without its transaction; with
 * idempotency keys, also that none of the keys stayed reserved (a key committed alone would make the next
 * message under it, in a transaction that commits, silently dropped as a duplicate).
 */
export async function expectNothingCommittedAlone(rig: FloatingEnqueueRig, options: { readonly idempotent: boolean }): Promise<void> {
  const committedAlone: number[] = [];
  const keys: string[] = [];
  for (let turns = 0; turns <= ROLLBACK_TURNS; turns += 1) {
    const key = options.idempotent ? `floating-${turns}-${Math.random().toString(36).slice(2)}` : undefined;
    if (key !== undefined) keys.push(key);
    let settled: Promise<unknown> | undefined;
    await rig.rollBackAfter(turns, (tx) => {
      // it may be refused or write inside the transaction: either way nothing may outlive the rollback
      settled = rig.outbox.enqueue(tx, floatingMessage(turns, key)).catch(() => undefined);
    });
    if (settled === undefined) throw new Error('the transaction under test never called enqueue');
    await settled;
    if ((await rig.rowCount()) > 0) {
      committedAlone.push(turns);
      break; // the count stays up from here: one is enough to fail
    }
  }
  expect(committedAlone, 'rolled back after this many microtask turns, the message committed on its own').toEqual([]);
  if (options.idempotent) {
    await rig.commit((tx) =>
      rig.outbox.enqueueMany(
        tx,
        keys.map((key, turns) => floatingMessage(turns, key)),
      ),
    );
    expect(await rig.rowCount(), 'every key is free again after its rollback (none reserved by a statement that committed alone)').toBe(keys.length);
  }
}

/**
 * The port's rule for `vouched: true`, inside an open transaction: the statement runs when `status()` says `'open'`
 * (the adapter confirmed it again as it sent it), and is refused, unsent, by an adapter that never says so.
 */
export async function expectVouchedOnlyWhereOpen(rig: FloatingEnqueueRig): Promise<void> {
  await rig.commit(async (tx) => {
    const status = await tx.status?.();
    const attempt = tx.query('SELECT 1 AS one', [], { vouched: true });
    if (status === 'open') expect((await attempt).rows.map((row) => Number(row.one))).toEqual([1]);
    else await expect(attempt).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION' });
  });
}

/**
 * The floating-enqueue cases every adapter runs: the enqueue not awaited meets the callback's throw, or a ROLLBACK
 * sent behind the ORM's back (`rawRollbackIs` names how), each with and without an idempotency key.
 */
export function floatingEnqueueCases<End>(
  rigFor: (end: End) => Promise<FloatingEnqueueRig>,
  ends: { readonly thrown: End; readonly rawRollback: End; readonly rawRollbackIs: string },
): void {
  for (const idempotent of [false, true]) {
    const keyed = idempotent ? ' (with an idempotency key)' : '';
    it(`commits nothing when the callback throws right after it${keyed}`, async () => {
      await expectNothingCommittedAlone(await rigFor(ends.thrown), { idempotent });
    });
    it(`commits nothing when ${ends.rawRollbackIs}${keyed}`, async () => {
      await expectNothingCommittedAlone(await rigFor(ends.rawRollback), { idempotent });
    });
  }
}
