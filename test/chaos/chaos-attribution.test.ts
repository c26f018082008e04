/**
 * The chaos checker's duplicate attribution, on hand-made journals: which fault explains a copy, and how
 * many copies a fault may explain. No processes: these run in a few milliseconds.
 */
import { describe, expect, it } from 'vitest';
import { attributeDuplicates, causeOf, duplicateBudget, type IncarnationRecord, indexSends } from '../../chaos/attribution.js';
import type { FaultRecord } from '../../chaos/fault-log.js';
import { DEFAULT_RELAY } from '../../chaos/spec.js';

const LEASE = 3000;

function fault(id: number, kind: string, start: number, end: number, extra: Partial<FaultRecord> = {}): FaultRecord {
  return { id, kind, start, end, mayDuplicate: true, ...extra };
}

/** One incarnation that claimed `id` at 1000, sent it at `sentAt` and never marked it. */
function unmarkedSend(name: string, sentAt: number, exit?: IncarnationRecord['exit']): IncarnationRecord {
  return {
    name,
    exit,
    events: [
      { t: 1000, e: 'claim', tok: 'a', ids: ['m1'] },
      { t: sentAt, e: 'send', tok: 'a', id: 'm1' },
    ],
  };
}

/** relay-0-0, stopped gracefully at 30 s, with these journal events. */
function stoppedAt30s(events: IncarnationRecord['events']): IncarnationRecord {
  return { name: 'relay-0-0', exit: { code: 0, signal: 'SIGTERM', t: 30_000 }, events };
}

function onlySend(incarnation: IncarnationRecord) {
  const send = indexSends([incarnation]).get('m1')?.[0];
  if (send === undefined) throw new Error('no send indexed');
  return send;
}

describe('chaos attribution: which fault explains a copy', () => {
  it('a zombie resumed after two leases: its send after SIGCONT is explained by the pause', () => {
    const pause = fault(1, 'sigstop-zombie', 2000, 2000 + 2 * LEASE, { target: 'relay-1-0' });
    const send = onlySend(unmarkedSend('relay-1-0', 2000 + 2 * LEASE + 100));
    expect(causeOf(send, [pause], LEASE)?.id).toBe(1);
  });

  it('a relay cut off from the database: a send during the cut-off, long after it began, is explained by it', () => {
    const cut = fault(1, 'relay-database-blackhole', 2000, 2000 + 2.5 * LEASE, { target: 'relay-2-0' });
    const send = onlySend(unmarkedSend('relay-2-0', 2000 + 2 * LEASE));
    expect(causeOf(send, [cut], LEASE)?.id).toBe(1);
  });

  it('a fault of another relay, or one that ended more than a lease before the send, explains nothing', () => {
    const other = fault(1, 'relay-database-outage', 2000, 6000, { target: 'relay-0-0' });
    const old = fault(2, 'sigstop-zombie', 2000, 3000, { target: 'relay-2-0' });
    const send = onlySend(unmarkedSend('relay-2-0', 3000 + LEASE + 1000));
    expect(causeOf(send, [other, old], LEASE)).toBeUndefined();
  });

  it('a row the completion skipped: a database outage seconds after the skip, which cost the relay its partition, explains the copy', () => {
    // seen in the ci set (rabbit-database): a row locked from outside was skipped at 2000; the relay kept it in memory,
    // an outage from 4800 let its lease lapse, and the relay that took the partition over published the row again
    const outage = fault(1, 'database-outage', 4800, 7700);
    const skipped = stoppedAt30s([
      { t: 1000, e: 'claim', tok: 'a', ids: ['m1', 'm2'] },
      { t: 1500, e: 'send', tok: 'a', id: 'm1' },
      { t: 1500, e: 'send', tok: 'a', id: 'm2' },
      { t: 2000, e: 'mark', tok: 'a', ids: ['m2'], n: 1 },
      { t: 2000, e: 'skip', tok: 'a', ids: ['m1'] },
    ]);
    const sends = indexSends([skipped]);
    expect(attributeDuplicates(new Map([['m1', 1]]), sends, [outage], LEASE)).toMatchObject({ attributed: 1, unattributed: [] });
    // the row that was written is settled at its mark: the same outage explains no copy of it
    expect(attributeDuplicates(new Map([['m2', 1]]), sends, [outage], LEASE).unattributed).toEqual([{ id: 'm2', copies: 1 }]);
  });

  it("a skipped row written later under another read's token: its attempt ends there, and a fault after it explains no copy", () => {
    const late = fault(1, 'database-outage', 9000, 9500);
    const [send] =
      indexSends([
        stoppedAt30s([
          { t: 1000, e: 'claim', tok: 'a', ids: ['m1'] },
          { t: 1500, e: 'send', tok: 'a', id: 'm1' },
          { t: 2000, e: 'skip', tok: 'a', ids: ['m1'] },
          // the row, still pending, came back in the next read (token b) and the retry wrote it
          { t: 2500, e: 'claim', tok: 'b', ids: ['m1'] },
          { t: 3000, e: 'mark', tok: 'b', ids: ['m1'], n: 1 },
        ]),
      ]).get('m1') ?? [];
    expect(send).toMatchObject({ marked: false, until: 3000 });
    expect(causeOf(send as NonNullable<typeof send>, [late], LEASE)).toBeUndefined();
  });

  it('a graceful leave explains no copy, a SIGKILL leave does', () => {
    const incarnation = unmarkedSend('relay-3-0', 1500, { code: null, signal: 'SIGTERM', t: 1600 });
    const sends = indexSends([incarnation]);
    const copies = new Map([['m1', 1]]);
    const graceful = fault(1, 'leave-sigterm', 1550, 1600, { target: 'relay-3-0', mayDuplicate: false });
    expect(attributeDuplicates(copies, sends, [graceful], LEASE).unattributed).toEqual([{ id: 'm1', copies: 1 }]);
    const killed = fault(1, 'leave-sigkill', 1550, 1550, { target: 'relay-3-0' });
    expect(attributeDuplicates(copies, sends, [killed], LEASE).attributed).toBe(1);
  });
});

describe('chaos attribution: the budget of one fault', () => {
  const relay = { ...DEFAULT_RELAY, batchSize: 20, lanes: 3, maxInFlight: 16, count: 4 };

  it('one relay hit: a claim per lane; every relay hit: that, times the relay count', () => {
    expect(duplicateBudget(fault(1, 'sigkill', 0, 0, { target: 'relay-0-0' }), relay)).toBe(60);
    expect(duplicateBudget(fault(1, 'database-outage', 0, 0), relay)).toBe(240);
  });

  it('an in-flight window larger than the claims counts instead, and a graceful stop allows none', () => {
    expect(duplicateBudget(fault(1, 'sigkill', 0, 0, { target: 'relay-0-0' }), { ...relay, maxInFlight: 100 })).toBe(100);
    expect(duplicateBudget(fault(1, 'leave-sigterm', 0, 0, { target: 'relay-0-0', mayDuplicate: false }), relay)).toBe(0);
  });
});
