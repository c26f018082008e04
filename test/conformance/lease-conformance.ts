import { afterEach, describe, expect, it } from 'vitest';
import type { PartitionLease } from '../../src/core/ports.js';
import { waitFor } from '../support/wait-for.js';
import type { LeaseEnvironment, LeaseHarness, RelayLock } from './lease-harness.js';

const lease = 60_000;
const numbers = (leases: readonly { partition: number }[]) => leases.map((l) => l.partition);
const byId = <T extends { id: string } | readonly [string, unknown]>(list: T[]): T[] =>
  list.sort((x, y) => {
    const [i, j] = [Array.isArray(x) ? x[0] : (x as { id: string }).id, Array.isArray(y) ? y[0] : (y as { id: string }).id];
    return i < j ? -1 : i > j ? 1 : 0;
  });
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

/**
 * The partition-lease contract (`RelayLeases`), run against each real database. It talks to the store only
 * through the port and the harness's `LeaseControls`, so any database can run it.
 */
export function describeLeaseConformance(harness: LeaseHarness): void {
  describe(`${harness.name} lease conformance`, () => {
    let env: LeaseEnvironment | undefined;
    /** A migrated table, no resize waiting. */
    const setup = async () => {
      env = await harness.setup();
      return env;
    };
    const join = async (e: LeaseEnvironment, name: string, leaseMs = lease) => (await e.leases.join({ name, leaseMs })).relayId;
    afterEach(async () => {
      await env?.cleanup();
      env = undefined;
    });

    it('starts with 64 free partitions and grants open', async () => {
      env = await harness.setup();
      const e = env;
      const joined = await e.leases.join({ name: 'first', leaseMs: lease });
      expect(joined.alive).toBe(true);
      expect(joined.config).toEqual({ partitionCount: 64, generation: 1, resizeTo: null, grantsOpen: true });
      expect(joined.grantable).toBe(64);
      expect(numbers(await e.leases.acquire(joined.relayId, 64))).toEqual(range(0, 64));
    });

    it('refuses a bad relay name, lease or acquire count with OUTBOXER_INVALID_OPTION, naming what it got', async () => {
      const e = await setup();
      await expect(e.leases.join({ name: '', leaseMs: lease })).rejects.toMatchObject({
        code: 'OUTBOXER_INVALID_OPTION',
        message: expect.stringContaining('got 0 bytes'),
      });
      await expect(e.leases.join({ name: 'x', leaseMs: 1.5 })).rejects.toMatchObject({
        code: 'OUTBOXER_INVALID_OPTION',
        message: expect.stringContaining('got 1.5'),
      });
      const relayId = await join(e, 'a');
      await expect(e.leases.acquire(relayId, -1)).rejects.toMatchObject({
        code: 'OUTBOXER_INVALID_OPTION',
        message: expect.stringContaining(`relay ${relayId}`),
      });
      expect((await e.leases.membership(relayId)).relays.map((r) => r.name)).toEqual(['a']);
    });

    it('a partition is granted to one relay at a time, with a higher epoch each grant', async () => {
      const e = await setup();
      const [a, b] = [await join(e, 'a'), await join(e, 'b')];
      const first = await e.leases.acquire(a, 2);
      expect(first).toEqual([
        { partition: 0, epoch: '1', unclean: 0 },
        { partition: 1, epoch: '1', unclean: 0 },
      ]);
      expect(numbers(await e.leases.acquire(b, 64))).toEqual(range(2, 64));
      expect(await e.leases.acquire(b, 64)).toEqual([]);
      expect(await e.leases.release(a, first.slice(0, 1))).toBe(1);
      expect(await e.leases.acquire(b, 64)).toEqual([{ partition: 0, epoch: '2', unclean: 0 }]);
      expect(await e.leases.release(b, [{ partition: 0, epoch: '2' }])).toBe(1);
      expect(await e.leases.acquire(a, 1)).toEqual([{ partition: 0, epoch: '3', unclean: 0 }]);
      const [ofA, ofB] = [await e.leases.membership(a), await e.leases.membership(b)];
      expect(ofA.owned).toEqual([
        { partition: 0, epoch: '3', state: 'owned', unclean: 0 },
        { partition: 1, epoch: '1', state: 'owned', unclean: 0 },
      ]);
      expect(numbers(ofB.owned)).toEqual(range(2, 64));
      expect(ofA.grantable).toBe(0);
    });

    it('concurrent acquires never grant one partition twice', async () => {
      const e = await setup();
      const relays = await Promise.all(range(0, 6).map((i) => join(e, `r${i}`)));
      for (let round = 1; round <= 3; round++) {
        const grants = await Promise.all(relays.map((id) => e.leases.acquire(id, 20)));
        const all = grants.flat();
        expect(all).toHaveLength(64);
        expect(new Set(numbers(all)).size).toBe(64);
        expect(all.every((g) => g.epoch === String(round))).toBe(true);
        const { relays: live } = await e.leases.membership(relays[0] ?? '');
        expect(live.map((r) => r.held).sort((x, y) => x - y)).toEqual(grants.map((g) => g.length).sort((x, y) => x - y));
        await Promise.all(relays.map((id, i) => e.leases.release(id, grants[i] ?? [])));
      }
    });

    it('an expired relay is reaped only after its expiry on the database clock', async () => {
      const e = await setup();
      const [a, b] = [await join(e, 'a'), await join(e, 'b')];
      await e.leases.acquire(a, 64);
      expect(await e.leases.acquire(b, 64)).toEqual([]);
      expect((await e.leases.membership(b)).relays.map((r) => r.id)).toContain(a);
      await e.controls.expireRelay(a);
      const before = await e.leases.membership(b);
      expect(before.relays.map((r) => r.id)).toEqual([b]);
      expect(before.grantable).toBe(64);
      const taken = await e.leases.acquire(b, 64);
      expect(numbers(taken)).toEqual(range(0, 64));
      expect(taken.every((g) => g.epoch === '2')).toBe(true);
    });

    it('a heartbeat extends the lease from the database clock, and is refused once the lease ran out', async () => {
      const e = await setup();
      const a = await join(e, 'a', 10_000);
      const beat = await e.leases.heartbeat(a);
      expect(beat.alive).toBe(true);
      const mine = beat.relays.find((r) => r.id === a);
      expect(mine?.expiresInMs).toBeGreaterThan(5_000);
      expect(mine?.expiresInMs).toBeLessThanOrEqual(10_000);
      await e.controls.expireRelay(a);
      expect((await e.leases.heartbeat(a)).alive).toBe(false);
      expect((await e.leases.heartbeat(a)).alive).toBe(false);
      expect((await e.leases.membership(a)).relays).toEqual([]);
    });

    it("a reaped relay's heartbeat reports it dead and it cannot get its partitions back without a new grant", async () => {
      const e = await setup();
      const [a, b] = [await join(e, 'a'), await join(e, 'b')];
      const held = await e.leases.acquire(a, 4);
      await e.controls.expireRelay(a);
      expect(numbers(await e.leases.acquire(b, 2))).toEqual([0, 1]);
      const dead = await e.leases.heartbeat(a);
      expect(dead).toMatchObject({ alive: false, owned: [] });
      expect(await e.leases.acquire(a, 64)).toEqual([]);
      expect(await e.leases.drain(a, held)).toBe(0);
      expect(await e.leases.release(a, held)).toBe(0);
      expect((await e.leases.membership(a)).owned).toEqual([]);
      // Its other partitions were freed by the reap: the next grant takes them, at a higher epoch.
      expect(await e.leases.acquire(b, 64)).toEqual(expect.arrayContaining([{ partition: 2, epoch: '2', unclean: 1 }]));
      const again = await e.leases.join({ name: 'a', leaseMs: lease });
      expect(again.relayId).not.toBe(a);
      expect(again.owned).toEqual([]);
    });

    it('release and drain need the owner and the current epoch', async () => {
      const e = await setup();
      const [a, b] = [await join(e, 'a'), await join(e, 'b')];
      const [stale] = await e.leases.acquire(a, 1);
      await e.leases.release(a, stale === undefined ? [] : [stale]);
      const [current] = await e.leases.acquire(a, 1);
      expect(current).toEqual({ partition: 0, epoch: '2', unclean: 0 });
      const at = (epoch: string): PartitionLease[] => [{ partition: 0, epoch, unclean: 0 }];
      expect(await e.leases.drain(a, at('1'))).toBe(0);
      expect(await e.leases.release(a, at('1'))).toBe(0);
      expect(await e.leases.drain(b, at('2'))).toBe(0);
      expect(await e.leases.release(b, at('2'))).toBe(0);
      expect((await e.leases.membership(a)).owned).toEqual([{ partition: 0, epoch: '2', state: 'owned', unclean: 0 }]);
      expect(await e.leases.drain(a, at('2'))).toBe(1);
      expect(await e.leases.drain(a, at('2'))).toBe(0);
      expect((await e.leases.membership(a)).owned).toEqual([{ partition: 0, epoch: '2', state: 'draining', unclean: 0 }]);
      expect(await e.leases.acquire(b, 1)).toEqual([{ partition: 1, epoch: '1', unclean: 0 }]);
      expect(await e.leases.release(a, at('2'))).toBe(1);
      expect(await e.leases.release(a, at('2'))).toBe(0);
      expect(await e.leases.acquire(b, 1)).toEqual([{ partition: 0, epoch: '3', unclean: 0 }]);
    });

    it('leave frees every partition, owned or draining, as a clean hand-over', async () => {
      const e = await setup();
      const [a, b] = [await join(e, 'a'), await join(e, 'b')];
      const held = await e.leases.acquire(a, 10);
      await e.leases.drain(a, held.slice(0, 3));
      expect(await e.leases.leave(a)).toBe(10);
      const after = await e.leases.membership(b);
      expect(after.relays.map((r) => r.id)).toEqual([b]);
      expect(after.grantable).toBe(64);
      const taken = await e.leases.acquire(b, 10);
      expect(taken.every((g) => g.unclean === 0 && g.epoch === '2')).toBe(true);
      expect((await e.leases.heartbeat(a)).alive).toBe(false);
      expect(await e.leases.leave(a)).toBe(0);
    });

    it('a grant after a takeover counts it as unclean; a release does not', async () => {
      const e = await setup();
      const [a, b, c] = [await join(e, 'a'), await join(e, 'b'), await join(e, 'c')];
      await e.leases.acquire(a, 2);
      await e.controls.expireRelay(a);
      const first = await e.leases.acquire(b, 2);
      expect(first).toEqual([
        { partition: 0, epoch: '2', unclean: 1 },
        { partition: 1, epoch: '2', unclean: 1 },
      ]);
      await e.controls.expireRelay(b);
      expect(await e.leases.acquire(c, 1)).toEqual([{ partition: 0, epoch: '3', unclean: 2 }]);
      expect(await e.leases.release(c, [{ partition: 0, epoch: '3' }])).toBe(1);
      expect(await e.leases.acquire(c, 2)).toEqual([
        { partition: 0, epoch: '4', unclean: 2 },
        { partition: 1, epoch: '3', unclean: 2 },
      ]);
    });

    it('a leaving relay takes nothing more, keeps what it holds, and is shown as leaving', async () => {
      const e = await setup();
      const [a, b] = [await join(e, 'a'), await join(e, 'b')];
      await e.leases.acquire(a, 2);
      const beat = await e.leases.heartbeat(a, { leaving: true });
      expect(beat.alive).toBe(true);
      expect(await e.leases.acquire(a, 64)).toEqual([]);
      expect((await e.leases.heartbeat(a)).relays.find((r) => r.id === a)).toMatchObject({ leaving: true, held: 2 });
      const seen = (await e.leases.membership(b)).relays.map((r) => ({ id: r.id, name: r.name, leaving: r.leaving, held: r.held }));
      expect(seen).toEqual(
        byId([
          { id: a, name: 'a', leaving: true, held: 2 },
          { id: b, name: 'b', leaving: false, held: 0 },
        ]),
      );
    });

    it('a relay reports broker trouble with its join and beats; every member sees it, and a beat without it clears it', async () => {
      const e = await setup();
      const a = (await e.leases.join({ name: 'a', leaseMs: lease, trouble: 'broker unreachable at join' })).relayId;
      const b = await join(e, 'b');
      const troubleOf = async (viewer: string, id: string) => (await e.leases.membership(viewer)).relays.find((r) => r.id === id)?.trouble;
      expect(await troubleOf(b, a)).toBe('broker unreachable at join');
      expect(await troubleOf(a, b)).toBeNull();
      await e.leases.heartbeat(b, { trouble: 'x'.repeat(600) });
      const long = await troubleOf(a, b);
      expect(Buffer.byteLength(long ?? '')).toBeLessThanOrEqual(500);
      expect(long?.endsWith('...')).toBe(true);
      const beat = await e.leases.heartbeat(a);
      expect(beat.relays.find((r) => r.id === a)?.trouble).toBeNull();
      expect(await troubleOf(b, a)).toBeNull();
      await expect(e.leases.heartbeat(a, { trouble: '' })).rejects.toMatchObject({ code: 'OUTBOXER_INVALID_OPTION' });
    });

    it('membership shows the live relays with their holdings, my partitions, and what can be granted', async () => {
      const e = await setup();
      const [a, b, gone] = [await join(e, 'a'), await join(e, 'b'), await join(e, 'gone')];
      await e.leases.acquire(a, 3);
      await e.leases.acquire(b, 5);
      await e.leases.acquire(gone, 7);
      await e.controls.expireRelay(gone);
      const view = await e.leases.membership(a);
      expect(view.alive).toBe(true);
      expect(view.relays.map((r) => [r.id, r.held] as const)).toEqual(byId([[a, 3] as const, [b, 5] as const]));
      expect(numbers(view.owned)).toEqual([0, 1, 2]);
      expect(view.grantable).toBe(64 - 3 - 5);
      expect(view.config).toEqual({ partitionCount: 64, generation: 1, resizeTo: null, grantsOpen: true });
      expect((await e.leases.membership(gone)).alive).toBe(false);
    });

    it('grants close while a resize waits, and membership says so; what is held stays held until given back', async () => {
      const e = await setup();
      const [a, b] = [await join(e, 'a'), await join(e, 'b')];
      const held = await e.leases.acquire(a, 2);
      await e.controls.configure({ resizeTo: 16 });
      const view = await e.leases.heartbeat(a);
      expect(view.config).toEqual({ partitionCount: 64, generation: 1, resizeTo: 16, grantsOpen: false });
      expect(numbers(view.owned)).toEqual([0, 1]);
      expect(await e.leases.acquire(b, 64)).toEqual([]);
      expect(await e.leases.release(a, held)).toBe(2);
      expect(await e.leases.acquire(a, 64)).toEqual([]);
      await e.controls.configure({});
      expect((await e.leases.membership(b)).config).toMatchObject({ resizeTo: null, grantsOpen: true });
      expect(numbers(await e.leases.acquire(b, 1))).toEqual([0]);
    });

    if (!harness.concurrent) return;

    /** Starts `work` while the relay's row is locked as by a reap in progress, and waits until `work` blocks on it. */
    const blockedBehindLock = async <T>(e: LeaseEnvironment, relayId: string, work: () => Promise<T>): Promise<[RelayLock, Promise<T>]> => {
      if (e.controls.lockRelay === undefined) throw new Error(`${harness.name} runs statements side by side but has no lockRelay control`);
      const lock = await e.controls.lockRelay(relayId);
      const pending = work();
      pending.catch(() => undefined);
      try {
        await waitFor(async () => (await lock.waiting()) > 0, { timeoutMs: 10_000, what: 'the acquire to wait on its relays row' });
      } catch (error) {
        await lock.end({ reap: false });
        throw error;
      }
      return [lock, pending];
    };

    it('an acquire that waited while another relay took a partition does not take it too', async () => {
      const e = await setup();
      const a = await join(e, 'a');
      const [lock, acquiring] = await blockedBehindLock(e, a, () => e.leases.acquire(a, 1));
      const b = await join(e, 'b');
      expect(await e.leases.acquire(b, 1)).toEqual([{ partition: 0, epoch: '1', unclean: 0 }]);
      await lock.end({ reap: false });
      expect(await acquiring).toEqual([{ partition: 1, epoch: '1', unclean: 0 }]);
      expect(numbers((await e.leases.membership(b)).owned)).toEqual([0]);
    });

    it('an acquire racing the reap of its own relay grants nothing that outlives the reap', async () => {
      const e = await setup();
      const a = await join(e, 'a');
      const [lock, acquiring] = await blockedBehindLock(e, a, () => e.leases.acquire(a, 64));
      await lock.end({ reap: true });
      expect(await acquiring).toEqual([]);
      const b = await join(e, 'b');
      expect((await e.leases.membership(b)).grantable).toBe(64);
      expect(await e.leases.acquire(b, 64)).toHaveLength(64);
    });
  });
}
