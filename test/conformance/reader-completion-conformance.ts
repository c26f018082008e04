import { describe, expect, it } from 'vitest';
import { msg } from './store-conformance.js';
import { P, publishing, readerSuite } from './reader-conformance-kit.js';
import type { ReaderHarness } from './reader-harness.js';

/**
 * The completion contract of the read role (`PartitionReader.complete`), run against each real database from
 * `describeReaderConformance`: what is written for published, failed and held rows, fencing by epoch, rows taken by
 * the seqs the read returned, and rows another session locks.
 */
export function describeCompletionConformance(harness: ReaderHarness): void {
  describe(`${harness.name} completion conformance`, () => {
    const { setup, owner, enqueueAndFind } = readerSuite(harness);

    it('completes a partition: deletes published rows, backs off or parks failed ones, holds without an attempt', async () => {
      const e = await setup();
      const a = await owner(e);
      const [ok, retry, dead, held] = await enqueueAndFind(e, a, [msg('a.b', 'c'), msg('a.b', 'c'), msg('a.b', 'c'), msg('a.b', 'c')]);
      const p = ok?.partition ?? -1;
      const completion = {
        partition: p,
        epoch: a.epoch(p),
        published: [ok?.id ?? ''],
        failed: [
          { id: retry?.id ?? '', error: 'e2', retryInMs: 0 },
          { id: dead?.id ?? '', error: 'e3', dead: true as const },
        ],
        held: [{ id: held?.id ?? '', delayMs: 0, reason: 'paused' }],
      };
      expect(await e.reader.complete(a.id, [completion])).toEqual([{ partition: p, epoch: a.epoch(p), applied: true, changed: 4, skipped: [] }]);
      expect(await e.operator.stats()).toMatchObject({ published: 0, dead: 1 });
      expect(await e.operator.listDead(10)).toMatchObject([{ id: dead?.id, attempts: 1, reason: 'e3' }]);
      const read = (await a.readAll()).messages;
      expect(read).toMatchObject([
        { id: retry?.id, source: 'due', attempts: 2, lastError: 'e2', waitsFor: null },
        { id: held?.id, source: 'due', attempts: 1, lastError: 'paused', waitsFor: { seq: retry?.seq, dueInMs: 0 } },
      ]);
      const again = await e.reader.complete(a.id, [{ ...completion, failed: [{ id: dead?.id ?? '', error: 'e3', dead: true as const }], held: [] }]);
      expect(again).toEqual([{ partition: p, epoch: a.epoch(p), applied: true, changed: 0, skipped: [] }]);
      expect(await e.reader.complete(a.id, [])).toEqual([]);
    });

    it('keeps published rows, marked published, when the store retains them', async () => {
      const e = await setup({ retainPublishedMs: 60_000 });
      const a = await owner(e);
      const [row] = await enqueueAndFind(e, a, [msg('a.b', null)]);
      const p = row?.partition ?? -1;
      await e.reader.complete(a.id, [{ partition: p, epoch: a.epoch(p), published: [row?.id ?? ''], failed: [], held: [] }]);
      expect(await e.operator.stats()).toMatchObject({ pending: 0, published: 1 });
      expect((await a.readAll()).messages).toEqual([]);
    });

    it('writes nothing for a stale epoch or after another relay was granted the partition, and says so', async () => {
      const e = await setup();
      const a = await owner(e);
      const [row] = await enqueueAndFind(e, a, [msg('a.b', 'k')]);
      const p = row?.partition ?? -1;
      const stale = { partition: p, epoch: a.epoch(p) };
      await e.leases.release(a.id, a.leases);
      const b = await owner(e, 'b');
      const publish = { ...stale, published: [row?.id ?? ''], failed: [], held: [] };
      expect(await e.reader.complete(a.id, [publish])).toEqual([{ ...stale, applied: false, changed: 0, skipped: [] }]);
      expect(await e.reader.complete(b.id, [publish])).toEqual([{ ...stale, applied: false, changed: 0, skipped: [] }]);
      expect(await e.reader.countAttempt(a.id, stale, row?.id ?? '')).toBe(false);
      expect((await b.readAll()).messages).toMatchObject([{ id: row?.id, attempts: 1 }]);
      expect(await e.reader.countAttempt(b.id, { partition: p, epoch: b.epoch(p) }, row?.id ?? '')).toBe(true);
      expect((await b.readAll()).messages).toMatchObject([{ id: row?.id, attempts: 2 }]);
      expect(await e.reader.complete(b.id, [{ ...publish, epoch: b.epoch(p) }])).toEqual([
        { partition: p, epoch: b.epoch(p), applied: true, changed: 1, skipped: [] },
      ]);
    });

    it('publishing in a partition taken over from a dead owner resets its unclean count, and only that one', async () => {
      const e = await setup();
      const a = await owner(e);
      const [row] = await enqueueAndFind(e, a, [msg('a.b', 'k')]);
      const p = row?.partition ?? -1;
      await e.leaseControls.expireRelay(a.id);
      const b = await owner(e, 'b');
      expect(b.leases.every((l) => l.unclean === 1)).toBe(true);
      await e.reader.complete(b.id, [{ partition: p, epoch: b.epoch(p), published: [row?.id ?? ''], failed: [], held: [] }]);
      const owned = (await e.leases.membership(b.id)).owned;
      expect(owned.filter((o) => o.unclean === 0).map((o) => o.partition)).toEqual([p]);
      expect(owned.filter((o) => o.unclean === 1)).toHaveLength(P - 1);
    });

    // the relay names the partition count it read with (a store may then probe by partition and seq); a caller may not
    const counts = [
      { named: '', options: undefined },
      { named: ', given the partition count it read with', options: { partitionCount: P } },
    ] as const;

    for (const { named, options } of counts)
      it(`takes published rows by the seqs the read returned: each written once, every partition fenced by its epoch${named}`, async () => {
        const e = await setup();
        const a = await owner(e);
        const rows = await enqueueAndFind(e, a, [msg('a.b', 's'), msg('a.b', 's'), msg('a.b', null), msg('a.b', null)]);
        const partitions = [...new Set(rows.map((m) => m.partition))];
        const completions = partitions.map((p) => ({
          partition: p,
          epoch: a.epoch(p),
          ...publishing(rows.filter((m) => m.partition === p)),
          failed: [],
          held: [],
        }));
        const outcome = (changed: (p: number) => number, applied = true) =>
          partitions.map((p) => ({ partition: p, epoch: a.epoch(p), applied, changed: changed(p), skipped: [] }));
        expect(await e.reader.complete(a.id, completions, options)).toEqual(outcome((p) => rows.filter((m) => m.partition === p).length));
        expect(await e.operator.stats()).toMatchObject({ pending: 0, published: 0 });
        expect(await e.reader.complete(a.id, completions, options)).toEqual(outcome(() => 0));
        const [late] = await enqueueAndFind(e, a, [msg('a.b', 's')]);
        const p = late?.partition ?? -1;
        const stale = { partition: p, epoch: a.epoch(p), ...publishing(late === undefined ? [] : [late]), failed: [], held: [] };
        await e.leases.release(a.id, a.leases);
        const b = await owner(e, 'b');
        expect(await e.reader.complete(a.id, [stale], options)).toEqual([{ partition: p, epoch: a.epoch(p), applied: false, changed: 0, skipped: [] }]);
        expect((await b.readAll()).messages.map((m) => m.id)).toEqual([late?.id]);
      });

    for (const { named, options } of counts)
      it(`writes nothing for a row whose seq names another row, or that is not in the partition named, and does not report it skipped${named}`, async () => {
        const e = await setup();
        const a = await owner(e);
        const [first, second] = await enqueueAndFind(e, a, [msg('a.b', 'k'), msg('a.b', 'k')]);
        const p = first?.partition ?? -1;
        const others = await enqueueAndFind(
          e,
          a,
          Array.from({ length: 8 }, (_, i) => msg('a.b', `elsewhere-${i}`)),
        );
        const elsewhere = others.find((m) => m.partition !== p);
        if (first === undefined || second === undefined || elsewhere === undefined)
          throw new Error('setup: two rows of one key and a row of another partition');
        const q = elsewhere.partition;
        const nothing = (partition: number) => ({ partition, epoch: a.epoch(partition), applied: true, changed: 0, skipped: [] });
        const base = { partition: p, epoch: a.epoch(p), published: [] as string[], failed: [], held: [] };
        expect(await e.reader.complete(a.id, [{ ...base, published: [first.id], publishedSeqs: [second.seq] }], options)).toEqual([nothing(p)]);
        expect(await e.reader.complete(a.id, [{ ...base, published: [elsewhere.id], publishedSeqs: [elsewhere.seq] }], options)).toEqual([nothing(p)]);
        expect(await e.reader.complete(a.id, [{ ...base, published: [elsewhere.id] }], options)).toEqual([nothing(p)]);
        expect(await e.reader.complete(a.id, [{ ...base, failed: [{ id: elsewhere.id, error: 'moved', dead: true }] }], options)).toEqual([nothing(p)]);
        const pending = (await a.readAll()).messages;
        expect(pending.map((m) => m.id)).toEqual(expect.arrayContaining([first.id, second.id, elsewhere.id]));
        expect(pending.every((m) => m.attempts === 1)).toBe(true);
        // with a failure beside them the seqs are still checked, and a second partition's published rows go in the same call
        const mixed = {
          ...base,
          published: [first.id, second.id],
          publishedSeqs: [first.seq, first.seq],
          failed: [{ id: second.id, error: 'e', retryInMs: 0 }],
        };
        const alone = { partition: q, epoch: a.epoch(q), ...publishing([elsewhere]), failed: [], held: [] };
        expect(await e.reader.complete(a.id, [mixed, alone], options)).toEqual([
          { ...nothing(p), changed: 2 },
          { ...nothing(q), changed: 1 },
        ]);
        const left = (await a.readAll()).messages.filter((m) => [first.id, second.id, elsewhere.id].includes(m.id));
        expect(left).toMatchObject([{ id: second.id, source: 'due', attempts: 2, lastError: 'e' }]);
      });

    it('keeps published rows taken by seq, marked published, when the store retains them', async () => {
      const e = await setup({ retainPublishedMs: 60_000 });
      const a = await owner(e);
      const [row] = await enqueueAndFind(e, a, [msg('a.b', null)]);
      const p = row?.partition ?? -1;
      const completion = { partition: p, epoch: a.epoch(p), ...publishing(row === undefined ? [] : [row]), failed: [], held: [] };
      expect(await e.reader.complete(a.id, [completion])).toEqual([{ partition: p, epoch: a.epoch(p), applied: true, changed: 1, skipped: [] }]);
      expect(await e.operator.stats()).toMatchObject({ pending: 0, published: 1 });
      expect(await e.reader.complete(a.id, [completion])).toEqual([{ partition: p, epoch: a.epoch(p), applied: true, changed: 0, skipped: [] }]);
      expect((await a.readAll()).messages).toEqual([]);
    });

    it('refuses publishedSeqs that are not one seq per published id, or a partition count out of range, with OUTBOXER_INVALID_OPTION, writing nothing', async () => {
      const e = await setup();
      const a = await owner(e);
      const [row] = await enqueueAndFind(e, a, [msg('a.b', 'k')]);
      const p = row?.partition ?? -1;
      const base = { partition: p, epoch: a.epoch(p), published: [row?.id ?? ''], failed: [], held: [] };
      for (const publishedSeqs of [[], [row?.seq ?? '', row?.seq ?? ''], ['1; DROP'], ['-1'], ['99999999999999999999'], [7]]) {
        await expect(e.reader.complete(a.id, [{ ...base, publishedSeqs } as never])).rejects.toMatchObject({ code: 'OUTBOXER_INVALID_OPTION' });
      }
      for (const partitionCount of [0, 1025, 1.5, -P]) {
        await expect(e.reader.complete(a.id, [base], { partitionCount })).rejects.toMatchObject({ code: 'OUTBOXER_INVALID_OPTION' });
      }
      expect((await a.readAll()).messages.map((m) => m.id)).toEqual([row?.id]);
    });

    it('applies nothing under a partition count the table does not have, as if fenced: a partition at or above it included', async () => {
      const e = await setup();
      const a = await owner(e);
      const [row] = await enqueueAndFind(e, a, [msg('a.b', 'k')]);
      const p = row?.partition ?? -1;
      const completion = { partition: p, epoch: a.epoch(p), ...publishing(row === undefined ? [] : [row]), failed: [], held: [] };
      const fenced = [{ partition: p, epoch: a.epoch(p), applied: false, changed: 0, skipped: [] }];
      // counts the table does not have, the row's partition below some and at or above others (unless it is 0)
      for (const partitionCount of [1, P / 2, P * 2, Math.max(p, 1)]) {
        expect(await e.reader.complete(a.id, [completion], { partitionCount })).toEqual(fenced);
      }
      expect((await a.readAll()).messages.map((m) => m.id)).toEqual([row?.id]);
      expect(await e.reader.complete(a.id, [completion], { partitionCount: P })).toEqual([{ ...fenced[0], applied: true, changed: 1 }]);
    });

    // two sessions side by side: only where the database runs statements concurrently
    if (!harness.concurrent) return;

    it('a completion never waits for a row another session locks: it writes the rest and reports that row as skipped', async () => {
      const e = await setup();
      const a = await owner(e);
      const [locked, free] = await enqueueAndFind(e, a, [msg('a.b', 'k'), msg('a.b', 'k')]);
      const p = locked?.partition ?? -1;
      if (e.controls.lockMessage === undefined) throw new Error(`${harness.name} runs statements side by side but has no lockMessage control`);
      const lock = await e.controls.lockMessage(locked?.id ?? '');
      try {
        const completion = { partition: p, epoch: a.epoch(p), published: [locked?.id ?? '', free?.id ?? ''], failed: [], held: [] };
        expect(await e.reader.complete(a.id, [completion])).toEqual([{ partition: p, epoch: a.epoch(p), applied: true, changed: 1, skipped: [locked?.id] }]);
        expect((await a.readAll()).messages.map((m) => m.id)).toEqual([locked?.id]);
        await lock.end();
        expect(await e.reader.complete(a.id, [{ ...completion, published: [locked?.id ?? ''] }])).toEqual([
          { partition: p, epoch: a.epoch(p), applied: true, changed: 1, skipped: [] },
        ]);
        expect((await a.readAll()).messages).toEqual([]);
      } finally {
        await lock.end().catch(() => undefined);
      }
    });

    for (const { named, options } of counts)
      it(`a completion by seq never waits for a row another session locks either: it writes the rest and reports that row as skipped${named}`, async () => {
        const e = await setup();
        const a = await owner(e);
        const [locked, free] = await enqueueAndFind(e, a, [msg('a.b', 'k'), msg('a.b', 'k')]);
        if (locked === undefined || free === undefined) throw new Error('setup: two rows of one key');
        const p = locked.partition;
        if (e.controls.lockMessage === undefined) throw new Error(`${harness.name} runs statements side by side but has no lockMessage control`);
        const lock = await e.controls.lockMessage(locked.id);
        try {
          const completion = { partition: p, epoch: a.epoch(p), ...publishing([locked, free]), failed: [], held: [] };
          expect(await e.reader.complete(a.id, [completion], options)).toEqual([
            { partition: p, epoch: a.epoch(p), applied: true, changed: 1, skipped: [locked.id] },
          ]);
          expect(await lock.waiting()).toBe(0);
          expect((await a.readAll()).messages.map((m) => m.id)).toEqual([locked.id]);
          await lock.end();
          expect(await e.reader.complete(a.id, [{ ...completion, ...publishing([locked]) }], options)).toEqual([
            { partition: p, epoch: a.epoch(p), applied: true, changed: 1, skipped: [] },
          ]);
          expect((await a.readAll()).messages).toEqual([]);
        } finally {
          await lock.end().catch(() => undefined);
        }
      });
  });
}
