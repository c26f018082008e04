import { afterEach, describe, expect, it } from 'vitest';
import type { PartitionLease, PartitionMessage, PartitionReadRequest, PartitionReadResult } from '../../src/core/ports.js';
import { waitFor } from '../support/wait-for.js';
import type { ReaderEnvironment, ReaderHarness } from './reader-harness.js';
import { msg } from './store-conformance.js';

const P = 64;
const lease = 60_000;
const all = Array.from({ length: P }, (_, i) => i);
const seqs = (messages: readonly PartitionMessage[]) => messages.map((m) => m.seq);
const bySeq = (a: string, b: string) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
const fresh = (partition: number, epoch: string, limit = 1000, after: string | null = null): PartitionReadRequest => ({ partition, epoch, after, recheck: null, limit });

/** A relay that owns every partition, as after a grant on a table switched to engine v2. */
interface Owner {
  readonly id: string;
  readonly leases: readonly PartitionLease[];
  epoch(partition: number): string;
  /** Reads every partition it owns from the start. */
  readAll(limit?: number): Promise<PartitionReadResult>;
}

/**
 * The read-path contract (`PartitionReader`), run against each real database. It talks to the store only
 * through the ports and the harness's controls, so any database can run it.
 */
export function describeReaderConformance(harness: ReaderHarness): void {
  describe(`${harness.name} reader conformance`, () => {
    let env: ReaderEnvironment | undefined;
    const setup = async (options?: { retainPublishedMs?: number }) => {
      env = await harness.setup(options);
      await env.leaseControls.configure({ engine: 'v2' });
      return env;
    };
    const owner = async (e: ReaderEnvironment, name = 'a'): Promise<Owner> => {
      const { relayId: id } = await e.leases.join({ name, leaseMs: lease });
      const leases = await e.leases.acquire(id, P);
      const epoch = (partition: number) => leases.find((l) => l.partition === partition)?.epoch ?? 'none';
      const readAll = (limit?: number) => e.reader.read(id, P, leases.map((l) => fresh(l.partition, l.epoch, limit)));
      return { id, leases, epoch, readAll };
    };
    /** Enqueues and returns the stored messages as a read of every partition finds them. */
    const enqueueAndFind = async (e: ReaderEnvironment, relay: Owner, messages: Parameters<ReaderEnvironment['enqueue']>[0]) => {
      await e.enqueue(messages);
      const ids = new Set(messages.map((m) => m.id));
      return (await relay.readAll()).messages.filter((m) => ids.has(m.id));
    };
    afterEach(async () => {
      await env?.cleanup();
      env = undefined;
    });

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
      const stored = await enqueueAndFind(e, a, Array.from({ length: 10 }, (_, n) => msg('a.b', 'k', { n })));
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
      await e.reader.complete(a.id, [{ partition: p, epoch: a.epoch(p), published: [], failed: [], held: [{ id: held?.id ?? '', delayMs: 0, reason: 'paused' }] }]);
      const before = await e.controls.rowVersions();
      const top = stored.map((m) => m.seq).sort(bySeq).at(-1) ?? null;
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
      const done = await e.reader.complete(a.id, [{ partition: p, epoch: a.epoch(p), published: [], failed: [{ id: first?.id ?? '', error: 'boom', retryInMs: 60_000 }], held: [] }]);
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
      expect(later.map((m) => m.waitsFor)).toEqual([{ seq: first?.seq, dueInMs: 0 }, { seq: first?.seq, dueInMs: 0 }]);
    });

    it("holds a key's rows per destination: a failed row holds its destination's later rows of the key, not another's", async () => {
      const e = await setup();
      const a = await owner(e);
      const rows = [msg('a.b', 'k'), msg('a.b', 'k', { n: 1 }, { destination: 'partner' }), msg('a.b', 'k'), msg('a.b', 'k', { n: 1 }, { destination: 'partner' })];
      const [own1, partner1, own2, partner2] = await enqueueAndFind(e, a, rows);
      expect([own1, partner1, own2, partner2].map((m) => m?.destination)).toEqual([null, 'partner', null, 'partner']);
      const p = own1?.partition ?? -1;
      await e.reader.complete(a.id, [{ partition: p, epoch: a.epoch(p), published: [], failed: [{ id: partner1?.id ?? '', error: 'down', retryInMs: 60_000 }], held: [] }]);
      const read = (await a.readAll()).messages;
      expect(read.map((m) => [m.id, m.waitsFor?.seq ?? null])).toEqual([[own1?.id, null], [own2?.id, null], [partner2?.id, partner1?.seq]]);
      await e.reader.complete(a.id, [{ partition: p, epoch: a.epoch(p), published: [], failed: [{ id: own1?.id ?? '', error: 'down', retryInMs: 60_000 }], held: [] }]);
      const again = (await a.readAll()).messages;
      expect(again.map((m) => [m.id, m.waitsFor?.seq ?? null])).toEqual([[own2?.id, own1?.seq], [partner2?.id, partner1?.seq]]);
    });

    it("leaves a paused destination's due rows out of the due branch, never its fresh rows", async () => {
      const e = await setup();
      const a = await owner(e);
      const rows = [msg('a.b', 'k'), msg('a.b', 'k', { n: 1 }, { destination: 'partner' }), msg('a.b', null, { n: 2 }, { destination: 'partner' }), msg('a.b', 'k', { n: 3 }, { destination: 'other' })];
      const stored = await enqueueAndFind(e, a, rows);
      const byId = new Map(stored.map((m) => [m.id, m]));
      const [own, partner, partnerUnkeyed, other] = rows.map((r) => byId.get(r.id));
      const held = [own, partner, partnerUnkeyed, other].map((m) => ({ id: m?.id ?? '', delayMs: 0, reason: 'held' }));
      await e.reader.complete(a.id, [...new Set(stored.map((m) => m.partition))].map((p) => ({
        partition: p, epoch: a.epoch(p), published: [], failed: [], held: held.filter((h) => byId.get(h.id)?.partition === p),
      })));
      const readWith = async (pausedDestinations?: readonly string[]) => {
        const requests = a.leases.map((l) => fresh(l.partition, l.epoch, 1000, stored.find((m) => m.partition === l.partition)?.seq ?? null));
        return (await e.reader.read(a.id, P, requests, pausedDestinations === undefined ? undefined : { pausedDestinations })).messages.map((m) => m.id).sort();
      };
      const all = [own, partner, partnerUnkeyed, other].map((m) => m?.id ?? '').sort();
      expect(await readWith()).toEqual(all);
      expect(await readWith([])).toEqual(all);
      expect(await readWith(['partner'])).toEqual([own?.id ?? '', other?.id ?? ''].sort());
      expect(await readWith(['default', 'other'])).toEqual([partner?.id ?? '', partnerUnkeyed?.id ?? ''].sort());
      // fresh rows of a paused destination are still read (the position must pass them)
      const [late] = await enqueueAndFind(e, a, [msg('a.b', null, { n: 4 }, { destination: 'partner' })]);
      const p = late?.partition ?? -1;
      const read = await e.reader.read(a.id, P, [fresh(p, a.epoch(p), 1000, null)], { pausedDestinations: ['partner'] });
      expect(read.messages.map((m) => m.id)).toContain(late?.id);
    });

    it('names the nearest earlier scheduled row as the blocker, so a row never skips a hold between it and a due row', async () => {
      const e = await setup();
      const a = await owner(e);
      const [v1, v2, v3, v4] = await enqueueAndFind(e, a, [msg('a.b', 'n'), msg('a.b', 'n'), msg('a.b', 'n'), msg('a.b', 'n')]);
      const p = v1?.partition ?? -1;
      await e.reader.complete(a.id, [{
        partition: p, epoch: a.epoch(p), published: [], failed: [{ id: v1?.id ?? '', error: 'boom', retryInMs: 0 }],
        held: [{ id: v2?.id ?? '', delayMs: 60_000, reason: 'waits' }, { id: v3?.id ?? '', delayMs: 60_000, reason: 'waits' }],
      }]);
      const read = (await a.readAll()).messages;
      expect(read.map((m) => [m.id, m.source])).toEqual([[v1?.id, 'due'], [v4?.id, 'fresh']]);
      expect(read[0]?.waitsFor).toBeNull();
      expect(read[1]?.waitsFor?.seq).toBe(v3?.seq);
      expect(read[1]?.waitsFor?.dueInMs).toBeGreaterThan(50_000);
    });

    it('completes a partition: deletes published rows, backs off or parks failed ones, holds without an attempt', async () => {
      const e = await setup();
      const a = await owner(e);
      const [ok, retry, dead, held] = await enqueueAndFind(e, a, [msg('a.b', 'c'), msg('a.b', 'c'), msg('a.b', 'c'), msg('a.b', 'c')]);
      const p = ok?.partition ?? -1;
      const completion = {
        partition: p, epoch: a.epoch(p), published: [ok?.id ?? ''],
        failed: [{ id: retry?.id ?? '', error: 'e2', retryInMs: 0 }, { id: dead?.id ?? '', error: 'e3', dead: true as const }],
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
      expect(await e.reader.complete(b.id, [{ ...publish, epoch: b.epoch(p) }])).toEqual([{ partition: p, epoch: b.epoch(p), applied: true, changed: 1, skipped: [] }]);
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

    it('reads rows a plain-SQL producer inserted, and schedules those it wrote with due_at', async () => {
      const e = await setup();
      const a = await owner(e);
      await e.controls.insertPlain([
        { topic: 'a.b', type: 'plain', payload: '{"n": 1}', key: 'sql' },
        { topic: 'a.b', type: 'plain', payload: '{"n": 2}', key: 'sql', dueInSeconds: 3600 },
        { topic: 'a.b', type: 'plain', payload: '{"n": 3}', key: 'sql' },
      ]);
      const read = (await a.readAll()).messages;
      expect(read.map((m) => [m.body, m.source])).toEqual([['{"n": 1}', 'fresh'], ['{"n": 3}', 'fresh']]);
      expect(read[1]?.waitsFor?.dueInMs).toBeGreaterThan(3_000_000);
      await e.controls.makeDueNow();
      expect((await a.readAll()).messages.map((m) => [m.body, m.source])).toEqual([['{"n": 1}', 'fresh'], ['{"n": 2}', 'due'], ['{"n": 3}', 'fresh']]);
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
      await e.reader.complete(a.id, [{ partition: p, epoch: a.epoch(p), published: [top?.id ?? ''], failed: [{ id: row?.id ?? '', error: 'bad', dead: true }], held: [] }]);
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
      const heldBadly = { partition: 0, epoch: '1', published: [], failed: [], held: [{ id: '00000000-0000-4000-8000-000000000000', delayMs: -1, reason: null }] };
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
        await waitFor(async () => {
          settled = await e.reader.read(a.id, P, [request]);
          return settled.partitions[0]?.recheck?.applied === true;
        }, { timeoutMs: 20_000, what: 'the horizon to pass the tag of the range' });
        expect(settled?.messages.map((m) => [m.id, m.source])).toEqual([[early.id, 'recheck']]);
        expect(bySeq(settled?.messages[0]?.seq ?? '', later?.seq ?? '')).toBeLessThan(0);
      } finally {
        await pending.end({ commit: false }).catch(() => undefined);
      }
    });

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
        expect(await e.reader.complete(a.id, [{ ...completion, published: [locked?.id ?? ''] }])).toEqual([{ partition: p, epoch: a.epoch(p), applied: true, changed: 1, skipped: [] }]);
        expect((await a.readAll()).messages).toEqual([]);
      } finally {
        await lock.end().catch(() => undefined);
      }
    });
  });
}
