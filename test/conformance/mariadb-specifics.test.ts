import { describe, expect, it } from 'vitest';
import { MYSQL_GAUGE_EXACT_LIMIT } from '../../src/stores/mysql/operator/gauges.js';
import { GAUGE_EXACT_LIMIT } from '../../src/stores/postgres/gauges-sql.js';
import { mariadbReaderHarness } from '../support/dialects/index.js';
import { waitFor } from '../support/wait-for.js';
import { msg } from './store-conformance.js';

describe('MariaDB gauges limit', () => {
  it('counts exactly up to the same limit as PostgreSQL', () => {
    expect(MYSQL_GAUGE_EXACT_LIMIT).toBe(GAUGE_EXACT_LIMIT);
  });
});

// INNODB_TRX shows start times in the server's system zone: a session in another zone must not move the horizon
describe.each([undefined, '-07:00', '+09:00'])('MariaDB (mysql2) reader horizon, session time zone %s', (timeZone) => {
  const harness = mariadbReaderHarness(timeZone);
  it('stays below an open transaction across many horizon probes, then passes the tag once it committed', async () => {
    const env = await harness.setup();
    try {
      await env.leaseControls.configure({});
      const { relayId } = await env.leases.join({ name: 'h', leaseMs: 60_000 });
      const leases = await env.leases.acquire(relayId, 64);
      const late = msg('a.b', 'late');
      const open = await env.controls.openEnqueue?.([late]);
      if (open === undefined) throw new Error('openEnqueue missing');
      try {
        await env.enqueue([msg('a.b', 'late')]);
        const requests = leases.map((l) => ({ partition: l.partition, epoch: l.epoch, after: null, recheck: null, limit: 10 }));
        const passed = await env.reader.read(relayId, 64, requests);
        const [row] = passed.messages;
        const lease = leases.find((l) => l.partition === row?.partition);
        const recheck = {
          partition: row?.partition ?? -1,
          epoch: lease?.epoch ?? '',
          after: row?.seq ?? null,
          limit: 10,
          recheck: { from: null, to: row?.seq ?? '', tag: passed.tag ?? '' },
        };
        // Past the probe period and the next whole second: the horizon is probed afresh several times meanwhile.
        const until = Date.now() + 2_500;
        let reads = 0;
        while (Date.now() < until) {
          const whileOpen = await env.reader.read(relayId, 64, [recheck]);
          expect(whileOpen.partitions[0]?.recheck?.applied).toBe(false);
          reads++;
        }
        expect(reads).toBeGreaterThan(10);
        await open.end({ commit: true });
        const settled = await waitFor(
          async () => {
            const read = await env.reader.read(relayId, 64, [recheck]);
            return read.partitions[0]?.recheck?.applied === true ? read : null;
          },
          { timeoutMs: 45_000, what: 'the horizon to pass the tag once the transaction committed' },
        );
        expect(settled.messages.map((m) => [m.id, m.source])).toEqual([
          [late.id, 'recheck'],
          [row?.id, 'recheck'],
        ]);
      } finally {
        await open.end({ commit: false }).catch(() => undefined);
      }
    } finally {
      await env.cleanup();
    }
  });
});
