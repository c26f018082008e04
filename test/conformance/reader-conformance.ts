import { describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.js';
import type { PartitionReadResult } from '../../src/core/ports.js';
import { describeCompletionConformance } from './reader-completion-conformance.js';
import { bySeq, fresh, P, readerSuite, seqs } from './reader-conformance-kit.js';
import type { ReaderHarness } from './reader-harness.js';
import { msg } from './store-conformance.js';

/**
 * The read-path contract (`PartitionReader`), run against each real database. It talks to the store only
 * through the ports and the harness's controls, so any database can run it. Completions: `reader-completion-conformance.ts`.
 */
export function describeReaderConformance(harness: ReaderHarness): void {
  describe(`${harness.name} reader conformance`, () => {
    const { setup, owner, enqueueAndFind } = readerSuite(harness);

    it('spreads unkeyed rows over the partitions, keeps every row of a key in one, and returns each pending row once', async () => {
      const e = await setup();
      const a = await owner(e);
      const unkeyed = Array.from({ length: 300 }, () => msg('a.b', null));
      const keyed = Array.from({ length: 20 }, () => msg('a.b', 'k-1'));
      await e.enqueue([...unkeyed, ...keyed]);
      const { messages } = await a.readAll();
      expect(messages.map((m) => m.id).sort()).toEqual([...unkeyed, ...keyed].map((m) => m.id).sort());
      expect(new Set(messages.filter((m) => m.key === null).map((m) => m.partition)).size).toBeGreaterThan(40);
      expect(new Set(messages.filter((m) => m.key === 'k-1').map((m) => m.partition)).size).toBe(1);
      expect(messages.every((m) => m.source === 'fresh' && m.attempts === 1 && m.waitsFor === null && m.partition >= 0 && m.partition < P)).toBe(true);
    });

    it('returns fresh rows in seq order above the position, at most `limit`, and a tag only when it returned some', async () => {
      const e = await setup();
      const a = await owner(e);
      const stored = await enqueueAndFind(
        e,
        a,
        Array.from({ length: 10 }, (_, n) => msg('a.b', 'k', { n })),
      );
      const p = stored[0]?.partition ?? -1;
      expect(seqs(stored)).toEqual(seqs(stored).sort(bySeq));
      const first = await e.reader.read(a.id, P, [fresh(p, a.epoch(p), 4)]);
      expect(seqs(first.messages)).toEqual(seqs(stored).slice(0, 4));
      expect(first.partitions).toEqual([{ partition: p, reached: stored[3]?.seq, recheck: null }]);
      expect(first.tag).toMatch(/^[0-9]+$/);
      const next = await e.reader.read(a.id, P, [fresh(p, a.epoch(p), 4, first.partitions[0]?.reached ?? null)]);
      expect(seqs(next.messages)).toEqual(seqs(stored).slice(4, 8));
      const idle = await e.reader.read(a.id, P, [fresh(p, a.epoch(p), 4, stored[9]?.seq ?? null)]);
      expect(idle).toMatchObject({ tag: null, partitions: [{ partition: p, reached: null, recheck: null }], messages: [] });
      expect(idle.horizon).toMatch(/^[0-9]+$/);
    });

    it('writes no row while reading: fresh, recheck and due branches alike', async () => {
      const e = await setup();
      const a = await owner(e);
      const stored = await enqueueAndFind(e, a, [msg('a.b', 'k'), msg('a.b', 'k'), msg('a.b', null)]);
      const [held] = stored;
      const p = held?.partition ?? -1;
      await e.reader.complete(a.id, [
        { partition: p, epoch: a.epoch(p), published: [], failed: [], held: [{ id: held?.id ?? '', delayMs: 0, reason: 'paused' }] },
      ]);
      const before = await e.controls.rowVersions();
      const top =
        stored
          .map((m) => m.seq)
          .sort(bySeq)
          .at(-1) ?? null;
      const everything = a.leases.map((l) => ({ ...fresh(l.partition, l.epoch, 10, top), recheck: { from: null, to: top ?? '', tag: '1' } }));
      const read = await e.reader.read(a.id, P, everything);
      expect(read.messages.map((m) => m.source).sort()).toEqual(['due', 'recheck', 'recheck']);
      await a.readAll();
      expect(await e.controls.rowVersions()).toBe(before);
    });

    it('rechecks a range only once the horizon reached its tag, and reports a skipped recheck', async () => {
      const e = await setup();
      const a = await owner(e);
      const [row] = await enqueueAndFind(e, a, [msg('a.b', 'k')]);
      const p = row?.partition ?? -1;
      const range = (tag: string) => ({ ...fresh(p, a.epoch(p), 10, row?.seq ?? null), recheck: { from: null, to: row?.seq ?? '', tag } });
      // the largest 64-bit tag: above every horizon a store can return (an xid8, or microseconds since 1970)
      const early = await e.reader.read(a.id, P, [range('18446744073709551615')]);
      expect(early.messages).toEqual([]);
      expect(early.partitions).toEqual([{ partition: p, reached: null, recheck: { applied: false, last: null, full: false } }]);
      const settled = await e.reader.read(a.id, P, [range(early.horizon)]);
      expect(settled.messages.map((m) => [m.id, m.source])).toEqual([[row?.id, 'recheck']]);
      expect(settled.partitions).toEqual([{ partition: p, reached: null, recheck: { applied: true, last: row?.seq, full: false } }]);
      const full = await e.reader.read(a.id, P, [{ ...range(early.horizon), limit: 1 }]);
      expect(full.partitions[0]?.recheck).toEqual({ applied: true, last: row?.seq, full: true });
    });

    it('a failed row holds the later rows of its key, and a new owner of the partition sees the hold', async () => {
      const e = await setup();
      const a = await owner(e);
      const [first, second, third] = await enqueueAndFind(e, a, [msg('a.b', 'k'), msg('a.b', 'k'), msg('a.b', 'k')]);
      const p = first?.partition ?? -1;
      const done = await e.reader.complete(a.id, [
        { partition: p, epoch: a.epoch(p), published: [], failed: [{ id: first?.id ?? '', error: 'boom', retryInMs: 60_000 }], held: [] },
      ]);
      expect(done).toEqual([{ partition: p, epoch: a.epoch(p), applied: true, changed: 1, skipped: [] }]);
      await e.leases.release(a.id, a.leases);
      const b = await owner(e, 'b');
      const seen = (await b.readAll()).messages;
      expect(seen.map((m) => m.id)).toEqual([second?.id, third?.id]);
      for (const m of seen) {
        expect(m.waitsFor?.seq).toBe(first?.seq);
        expect(m.waitsFor?.dueInMs).toBeGreaterThan(50_000);
        expect(m.waitsFor?.dueInMs).toBeLessThanOrEqual(60_000);
      }
      await e.controls.makeDueNow();
      const due = (await e.reader.read(b.id, P, [fresh(p, b.epoch(p), 10, third?.seq ?? null)])).messages;
      expect(due).toMatchObject([{ id: first?.id, source: 'due', attempts: 2, lastError: 'boom', waitsFor: null }]);
      const later = (await b.readAll()).messages.filter((m) => m.source === 'fresh');
      expect(later.map((m) => m.waitsFor)).toEqual([
        { seq: first?.seq, dueInMs: 0 },
        { seq: first?.seq, dueInMs: 0 },
      ]);
    });

    it("holds a key's rows per destination: a failed row holds its destination's later rows of the key, not another's", async () => {
      const e = await setup();
      const a = await owner(e);
      const rows = [
        msg('a.b', 'k'),
        msg('a.b', 'k', { n: 1 }, { destination: 'partner' }),
        msg('a.b', 'k'),
        msg('a.b', 'k', { n: 1 }, { destination: 'partner' }),
      ];
      const [own1, partner1, own2, partner2] = await enqueueAndFind(e, a, rows);
      expect([own1, partner1, own2, partner2].map((m) => m?.destination)).toEqual([null, 'partner', null, 'partner']);
      const p = own1?.partition ?? -1;
      await e.reader.complete(a.id, [
        { partition: p, epoch: a.epoch(p), published: [], failed: [{ id: partner1?.id ?? '', error: 'down', retryInMs: 60_000 }], held: [] },
      ]);
      const read = (await a.readAll()).messages;
      expect(read.map((m) => [m.id, m.waitsFor?.seq ?? null])).toEqual([
        [own1?.id, null],
        [own2?.id, null],
        [partner2?.id, partner1?.seq],
      ]);
      await e.reader.complete(a.id, [
        { partition: p, epoch: a.epoch(p), published: [], failed: [{ id: own1?.id ?? '', error: 'down', retryInMs: 60_000 }], held: [] },
      ]);
      const again = (await a.readAll()).messages;
      expect(again.map((m) => [m.id, m.waitsFor?.seq ?? null])).toEqual([
        [own2?.id, own1?.seq],
        [partner2?.id, partner1?.seq],
      ]);
    });

    it('splits the due branch per destination when asked: each its own take, none of a destination not named, fresh rows always', async () => {
      const e = await setup();
      const a = await owner(e);
      // one key, so one partition: three due rows of `partner` below one of `default` and one of `other`
      const rows = [
        msg('a.b', 'k', { n: 0 }, { destination: 'partner' }),
        msg('a.b', 'k', { n: 1 }, { destination: 'partner' }),
        msg('a.b', 'k', { n: 2 }, { destination: 'partner' }),
        msg('a.b', 'k', { n: 3 }),
        msg('a.b', 'k', { n: 4 }, { destination: 'other' }),
      ];
      const stored = await enqueueAndFind(e, a, rows);
      const p = stored[0]?.partition ?? -1;
      expect(new Set(stored.map((m) => m.partition))).toEqual(new Set([p]));
      const id = (n: number) => stored[n]?.id ?? '';
      await e.reader.complete(a.id, [
        { partition: p, epoch: a.epoch(p), published: [], failed: [], held: stored.map((m) => ({ id: m.id, delayMs: 0, reason: 'held' })) },
      ]);
      const readWith = async (limit: number, dueDestinations?: readonly string[]) => {
        const request = fresh(p, a.epoch(p), limit, stored.at(-1)?.seq ?? null);
        return (await e.reader.read(a.id, P, [request], dueDestinations === undefined ? undefined : { dueDestinations })).messages.map((m) => m.id);
      };
      // one branch: partner's backlog takes the whole limit ahead of the others
      expect(await readWith(2)).toEqual([id(0), id(1)]);
      // per destination: each gets the limit, in seq order within the partition
      expect(await readWith(2, ['default', 'other', 'partner'])).toEqual([id(0), id(1), id(3), id(4)]);
      // a destination not named (paused, or unknown to the relay) has none of its due rows read
      expect(await readWith(10, ['default', 'other'])).toEqual([id(3), id(4)]);
      expect(await readWith(10, [])).toEqual([]);
      expect(await readWith(10, ['partner', 'partner'])).toEqual([id(0), id(1), id(2)]);
      // fresh rows of a destination not named are still read (the position must pass them)
      const [late] = await enqueueAndFind(e, a, [msg('a.b', null, { n: 5 }, { destination: 'partner' })]);
      const q = late?.partition ?? -1;
      const read = await e.reader.read(a.id, P, [fresh(q, a.epoch(q), 1000, null)], { dueDestinations: ['default'] });
      expect(read.messages.filter((m) => m.source === 'fresh').map((m) => m.id)).toContain(late?.id);
    });

    it('refuses due destinations that are not destination names, before reading', async () => {
      const e = await setup();
      const a = await owner(e);
      const p = a.leases[0]?.partition ?? 0;
      for (const dueDestinations of [["x'; DROP TABLE t; --"], [''], ['-x'], [7]]) {
        await expect(e.reader.read(a.id, P, [fresh(p, a.epoch(p))], { dueDestinations } as never)).rejects.toMatchObject({
          code: 'OUTBOXER_INVALID_DESTINATION',
        });
      }
    });

    it('names the nearest earlier scheduled row as the blocker, so a row never skips a hold between it and a due row', async () => {
      const e = await setup();
      const a = await owner(e);
      const [v1, v2, v3, v4] = await enqueueAndFind(e, a, [msg('a.b', 'n'), msg('a.b', 'n'), msg('a.b', 'n'), msg('a.b', 'n')]);
      const p = v1?.partition ?? -1;
      await e.reader.complete(a.id, [
        {
          partition: p,
          epoch: a.epoch(p),
          published: [],
          failed: [{ id: v1?.id ?? '', error: 'boom', retryInMs: 0 }],
          held: [
            { id: v2?.id ?? '', delayMs: 60_000, reason: 'waits' },
            { id: v3?.id ?? '', delayMs: 60_000, reason: 'waits' },
          ],
        },
      ]);
      const read = (await a.readAll()).messages;
      expect(read.map((m) => [m.id, m.source])).toEqual([
        [v1?.id, 'due'],
        [v4?.id, 'fresh'],
      ]);
      expect(read[0]?.waitsFor).toBeNull();
      expect(read[1]?.waitsFor?.seq).toBe(v3?.seq);
      expect(read[1]?.waitsFor?.dueInMs).toBeGreaterThan(50_000);
    });

    it('reads rows a plain-SQL producer inserted, and schedules those it wrote with due_at', async () => {
      const e = await setup();
      const a = await owner(e);
      await e.controls.insertPlain([
        { topic: 'a.b', type: 'plain', payload: '{"n": 1}', key: 'sql' },
        { topic: 'a.b', type: 'plain', payload: '{"n": 2}', key: 'sql', dueInSeconds: 3600 },
        { topic: 'a.b', type: 'plain', payload: '{"n": 3}', key: 'sql' },
      ]);
      const read = (await a.readAll()).messages;
      expect(read.map((m) => [m.body, m.source])).toEqual([
        ['{"n": 1}', 'fresh'],
        ['{"n": 3}', 'fresh'],
      ]);
      expect(read[1]?.waitsFor?.dueInMs).toBeGreaterThan(3_000_000);
      await e.controls.makeDueNow();
      expect((await a.readAll()).messages.map((m) => [m.body, m.source])).toEqual([
        ['{"n": 1}', 'fresh'],
        ['{"n": 2}', 'due'],
        ['{"n": 3}', 'fresh'],
      ]);
    });

    it('schedules a delayed enqueue: not fresh, and due once its time came', async () => {
      const e = await setup();
      const a = await owner(e);
      const [late, after, at] = [msg('a.b', 'd', {}, { delayMs: 60_000 }), msg('a.b', 'd'), msg('a.b', null)];
      await e.enqueue([late, after, { ...at, availableAt: new Date(Date.now() + 3_600_000) }]);
      const read = (await a.readAll()).messages;
      expect(read.map((m) => m.id)).toEqual([after.id]);
      expect(read[0]?.waitsFor?.dueInMs).toBeGreaterThan(50_000);
      await e.controls.makeDueNow();
      const due = (await a.readAll()).messages.filter((m) => m.source === 'due');
      expect(due.map((m) => m.id).sort()).toEqual([late.id, at.id].sort());
    });

    it('makes a dead row due again on retryDead, below every position', async () => {
      const e = await setup();
      const a = await owner(e);
      const [row, top] = await enqueueAndFind(e, a, [msg('a.b', 'r'), msg('a.b', 'r')]);
      const p = row?.partition ?? -1;
      await e.reader.complete(a.id, [
        { partition: p, epoch: a.epoch(p), published: [top?.id ?? ''], failed: [{ id: row?.id ?? '', error: 'bad', dead: true }], held: [] },
      ]);
      expect(await e.operator.retryDead([row?.id ?? ''])).toBe(1);
      const read = await e.reader.read(a.id, P, [fresh(p, a.epoch(p), 10, top?.seq ?? null)]);
      expect(read.messages).toMatchObject([{ id: row?.id, source: 'due', attempts: 1 }]);
    });

    it('refuses a bad partition count, partition, limit, position, epoch or delay with OUTBOXER_INVALID_OPTION', async () => {
      const e = await setup();
      const a = await owner(e);
      const bad = { code: 'OUTBOXER_INVALID_OPTION' };
      await expect(e.reader.read(a.id, 0, [])).rejects.toMatchObject(bad);
      expect(await e.reader.read(a.id, P, [])).toMatchObject({ tag: null, partitions: [], messages: [] });
      await expect(e.reader.complete(a.id, [{ partition: 0, epoch: 'x', published: [], failed: [], held: [] }])).rejects.toMatchObject(bad);
      const heldBadly = {
        partition: 0,
        epoch: '1',
        published: [],
        failed: [],
        held: [{ id: '00000000-0000-4000-8000-000000000000', delayMs: -1, reason: null }],
      };
      await expect(e.reader.complete(a.id, [heldBadly])).rejects.toMatchObject(bad);
      await expect(e.reader.read(a.id, P, [fresh(P, '1')])).rejects.toMatchObject(bad);
      await expect(e.reader.read(a.id, P, [fresh(0, '1'), fresh(0, '1')])).rejects.toMatchObject(bad);
      await expect(e.reader.read(a.id, P, [fresh(0, '1', 0)])).rejects.toMatchObject(bad);
      await expect(e.reader.read(a.id, P, [fresh(0, '1', 1, '1; DROP')])).rejects.toMatchObject(bad);
    });

    if (!harness.concurrent) return;

    it('does not return a late commit while it is open, and its recheck finds it once it ended', async () => {
      const e = await setup();
      const a = await owner(e);
      const open = e.controls.openEnqueue;
      if (open === undefined) throw new Error(`${harness.name} runs statements side by side but has no openEnqueue control`);
      const early = msg('a.b', 'late');
      const pending = await open([early]);
      try {
        const [later] = await enqueueAndFind(e, a, [msg('a.b', 'late')]);
        const p = later?.partition ?? -1;
        const passed = await e.reader.read(a.id, P, [fresh(p, a.epoch(p))]);
        expect(passed.messages.map((m) => m.id)).toEqual([later?.id]);
        const range = { from: null, to: later?.seq ?? '', tag: passed.tag ?? '' };
        const request = { ...fresh(p, a.epoch(p), 10, later?.seq ?? null), recheck: range };
        await e.reader.complete(a.id, [{ partition: p, epoch: a.epoch(p), published: [later?.id ?? ''], failed: [], held: [] }]);
        const whileOpen = await e.reader.read(a.id, P, [request]);
        expect(whileOpen.partitions[0]?.recheck).toEqual({ applied: false, last: null, full: false });
        await pending.end({ commit: true });
        let settled: PartitionReadResult | undefined;
        await waitFor(
          async () => {
            settled = await e.reader.read(a.id, P, [request]);
            return settled.partitions[0]?.recheck?.applied === true;
          },
          { timeoutMs: 20_000, what: 'the horizon to pass the tag of the range' },
        );
        expect(settled?.messages.map((m) => [m.id, m.source])).toEqual([[early.id, 'recheck']]);
        expect(bySeq(settled?.messages[0]?.seq ?? '', later?.seq ?? '')).toBeLessThan(0);
      } finally {
        await pending.end({ commit: false }).catch(() => undefined);
      }
    });
  });
  describeCompletionConformance(harness);
}
