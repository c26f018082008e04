import { afterEach, describe, expect, it } from 'vitest';
import type { OutboxGauges } from '../../src/core/ports.js';
import { msg } from './store-conformance.js';
import type { StoreEnvironment, StoreHarness } from './store-harness.js';

/**
 * The operator's `gauges()` (what a metrics scrape reads), run against each real database: counts exact up to
 * the store's `exactLimit` and estimated (never below it) above, the oldest pending age by the database clock,
 * and nothing written. Through the port and the harness's TestControls only.
 */
export function describeStoreGaugesConformance<Tx>(harness: StoreHarness<Tx>, { exactLimit }: { readonly exactLimit: number }): void {
  describe(`${harness.name} store gauges conformance`, () => {
    let env: StoreEnvironment<Tx> | undefined;
    const setup = async (options?: { retainPublishedMs?: number }) => {
      env = await harness.setup(options);
      return env;
    };
    afterEach(async () => {
      await env?.cleanup();
      env = undefined;
    });
    const gauges = (e: StoreEnvironment<Tx>): Promise<OutboxGauges> => {
      if (e.store.gauges === undefined) throw new Error(`${harness.name} has no gauges()`);
      return e.store.gauges();
    };
    const insertMany = async (e: StoreEnvironment<Tx>, count: number) => {
      for (let done = 0; done < count; done += 1000) {
        const batch = Array.from({ length: Math.min(1000, count - done) }, (_, i) => msg('bulk.t', `k${(done + i) % 97}`));
        await e.transaction((tx) => e.store.insert(tx, batch));
      }
    };

    it('reads an empty table as nothing pending, nothing dead, no age, exactly', async () => {
      const e = await setup();
      expect(await gauges(e)).toEqual({ pending: 0, pendingExact: true, dead: 0, oldestPendingAgeSeconds: 0 });
    });

    it('counts due and scheduled messages as pending, and ages the oldest by the database clock', async () => {
      const e = await setup();
      await e.transaction((tx) => e.store.insert(tx, [msg('a.b', 'k1'), msg('a.b', null), msg('a.c', 'k2', { n: 2 }, { delayMs: 3_600_000 })]));
      await e.controls.ageCreated(120);
      const read = await gauges(e);
      expect(read).toMatchObject({ pending: 3, pendingExact: true, dead: 0 });
      expect(read.oldestPendingAgeSeconds).toBeGreaterThanOrEqual(120);
      expect(read.oldestPendingAgeSeconds).toBeLessThan(120 + 60);
    });

    it('counts dead messages apart from pending ones, and does not count published ones', async () => {
      const e = await setup({ retainPublishedMs: 60_000 });
      await e.transaction((tx) => e.store.insert(tx, [msg('a.b', 'k1'), msg('a.b', 'k2')]));
      await e.controls.parkAllAsDead('unroutable');
      await e.transaction((tx) => e.store.insert(tx, [msg('a.b', 'k3')]));
      expect(await gauges(e)).toMatchObject({ pending: 1, pendingExact: true, dead: 2 });
      await e.controls.markAllPublished();
      expect(await gauges(e)).toEqual({ pending: 0, pendingExact: true, dead: 2, oldestPendingAgeSeconds: 0 });
    });

    it('reads and never writes: the rows are the same before and after', async () => {
      const e = await setup();
      await e.transaction((tx) => e.store.insert(tx, [msg('a.b', 'k1')]));
      const before = await e.controls.rowCount();
      await gauges(e);
      await gauges(e);
      expect(await e.controls.rowCount()).toBe(before);
      expect((await e.store.stats()).pending).toBe(1);
    });

    it('counts exactly up to the limit, then estimates (never below the limit) and says so', async () => {
      const e = await setup();
      await insertMany(e, exactLimit);
      expect(await gauges(e)).toMatchObject({ pending: exactLimit, pendingExact: true });
      const total = exactLimit + 500;
      await insertMany(e, total - exactLimit);
      const above = await gauges(e);
      expect(above.pendingExact).toBe(false);
      expect(above.pending).toBeGreaterThanOrEqual(exactLimit);
      expect(above.pending).toBeLessThanOrEqual(total * 3);
      expect(above.oldestPendingAgeSeconds).toBeGreaterThanOrEqual(0);

      await e.controls.parkAllAsDead('broker refused');
      const dead = await gauges(e);
      expect(dead).toMatchObject({ pending: 0, pendingExact: true });
      expect(dead.dead).toBeGreaterThanOrEqual(exactLimit);
      expect(dead.dead).toBeLessThanOrEqual(total * 3);
    });
  });
}
