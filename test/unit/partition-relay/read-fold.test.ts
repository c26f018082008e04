import { describe, expect, it } from 'vitest';
import { newOwner, type Settlement } from '../../../src/core/partitions/settlement.js';
import type { PartitionEntry } from '../../../src/core/partition-relay/partition-book.js';
import { foldRead, readFrom, readRequest } from '../../../src/core/partition-relay/read-fold.js';
import type { PartitionReadOutcome } from '../../../src/core/ports.js';
import { seeded } from '../../support/seeded-random.js';

const entry = (settlement: Settlement): PartitionEntry => ({
  partition: 2,
  epoch: '4',
  unclean: 0,
  draining: false,
  settlement,
  unwritten: new Map(),
  unwrittenRetryAt: 0,
  readAt: 0,
  backlog: false,
});
const outcome = (reached: string | null, recheck: PartitionReadOutcome['recheck'] = null): PartitionReadOutcome => ({ partition: 2, reached, recheck });

describe('readRequest', () => {
  it('asks a new owner for the partition from its start, with nothing to recheck', () => {
    expect(readRequest(entry(newOwner), 16).request).toEqual({ partition: 2, epoch: '4', after: null, recheck: null, limit: 16 });
  });

  it('reads fresh rows from the oldest unsettled seq, and sends the oldest range as decimal strings', () => {
    const settlement: Settlement = {
      position: 20n,
      ranges: [
        { from: 5n, to: 10n, tag: 100n },
        { from: 10n, to: 20n, tag: 105n },
      ],
      horizon: 90n,
    };
    const { request, recheck } = readRequest(entry(settlement), 8);
    expect(request.after).toBe('5');
    expect(request.recheck).toEqual({ from: '5', to: '10', tag: '100' });
    expect(recheck).toEqual({ from: 5n, to: 10n, tag: 100n });
  });

  it('reads from the position once every range settled, from the start while the first one has not', () => {
    expect(readFrom({ position: 20n, ranges: [], horizon: 90n })).toBe(20n);
    expect(readFrom({ position: 20n, ranges: [{ from: null, to: 20n, tag: 100n }], horizon: 90n })).toBe(null);
  });
});

describe('foldRead', () => {
  it('moves the position to the highest fresh seq and leaves the passed range tagged', () => {
    const first = readRequest(entry(newOwner), 16);
    const after = foldRead(newOwner, first, outcome('12'), { horizon: '95', tag: '101' }, 3);
    expect(after).toEqual({ position: 12n, ranges: [{ from: null, to: 12n, tag: 101n }], horizon: 95n });
  });

  it('drops a recheck the horizon allowed, keeps one it skipped', () => {
    const settlement: Settlement = { position: 12n, ranges: [{ from: null, to: 12n, tag: 101n }], horizon: 95n };
    const sent = readRequest(entry(settlement), 16);
    expect(foldRead(settlement, sent, outcome(null, { applied: true, last: null, full: false }), { horizon: '102', tag: null }, 0).ranges).toEqual([]);
    expect(foldRead(settlement, sent, outcome(null, { applied: false, last: null, full: false }), { horizon: '100', tag: null }, 0).ranges).toEqual(
      settlement.ranges,
    );
  });

  it('with no tag (no fresh rows anywhere) pushes no range and never mistakes it for a restore', () => {
    const settlement: Settlement = { position: 12n, ranges: [{ from: null, to: 12n, tag: 101n }], horizon: 95n };
    const after = foldRead(settlement, readRequest(entry(settlement), 16), outcome(null), { horizon: '96', tag: null }, 0);
    expect(after).toEqual({ ...settlement, horizon: 96n });
  });

  it('refuses fresh rows without a tag (a store that breaks the contract)', () => {
    expect(() => foldRead(newOwner, readRequest(entry(newOwner), 16), outcome('3'), { horizon: '1', tag: null }, 1)).toThrow(/without a tag/);
  });

  it('keeps the rest of a settled range when the fresh rows filled their take below its end', () => {
    const settlement: Settlement = { position: 30n, ranges: [{ from: null, to: 30n, tag: 101n }], horizon: 95n };
    const after = foldRead(
      settlement,
      readRequest(entry(settlement), 4),
      outcome('9', { applied: true, last: null, full: false }),
      { horizon: '110', tag: '120' },
      4,
    );
    expect(after.ranges).toEqual([{ from: 9n, to: 30n, tag: 101n }]);
    expect(after.position).toBe(30n);
  });

  it('drops a settled range the fresh rows covered, even when they filled their take beyond it', () => {
    const settlement: Settlement = { position: 30n, ranges: [{ from: null, to: 30n, tag: 101n }], horizon: 95n };
    const after = foldRead(
      settlement,
      readRequest(entry(settlement), 4),
      outcome('40', { applied: true, last: null, full: false }),
      { horizon: '110', tag: '120' },
      4,
    );
    expect(after).toEqual({ position: 40n, ranges: [{ from: 30n, to: 40n, tag: 120n }], horizon: 110n });
  });

  it('over random reads, a read without fresh rows never starts the partition over (position and ranges kept)', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const random = seeded(seed);
      let settlement: Settlement = newOwner;
      let xid = 100n;
      let seq = 0n;
      let horizon = 90n;
      for (let step = 0; step < 40; step++) {
        const sent = readRequest(entry(settlement), 16);
        xid += BigInt(1 + Math.floor(random() * 3));
        const candidate = xid - BigInt(Math.floor(random() * 5));
        if (candidate > horizon) horizon = candidate; // xmin never goes backwards within one cluster
        const fresh = random() < 0.5;
        const before = settlement;
        if (fresh) seq += BigInt(1 + Math.floor(random() * 10));
        const recheck = sent.recheck === null ? null : { applied: sent.recheck.tag <= horizon, last: null, full: false };
        settlement = foldRead(
          settlement,
          sent,
          outcome(fresh ? seq.toString() : null, recheck),
          { horizon: horizon.toString(), tag: fresh ? (xid + 1n).toString() : null },
          fresh ? 1 : 0,
        );
        xid += 1n;
        if (!fresh) {
          expect(settlement.position).toBe(before.position);
          expect(settlement.ranges.length).toBeLessThanOrEqual(before.ranges.length);
        } else expect(settlement.position).toBe(seq);
      }
    }
  });
});
