import { describe, expect, it } from 'vitest';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { waitFor } from '../support/wait-for.js';
import { mysqlLeaseControls } from './mysql-lease-controls.js';
import { mysqlReaderControls } from './mysql-reader-controls.js';
import { describeReaderConformance } from './reader-conformance.js';
import type { ReaderHarness } from './reader-harness.js';
import { msg } from './store-conformance.js';

const harnessIn = (timeZone?: string): ReaderHarness => ({
  name: `MariaDB (mysql2)${timeZone === undefined ? '' : `, session time zone ${timeZone}`}`,
  concurrent: true,
  async setup(options = {}) {
    const fresh = await freshMysqlDatabase('reader', timeZone === undefined ? {} : { timeZone });
    const store = new MysqlOutboxStore(fresh.database, options);
    await store.migrate();
    return {
      reader: store.reader,
      leases: store.leases,
      operator: store,
      enqueue: (messages) => fresh.database.transaction(async (tx) => void (await store.insert(tx, messages))),
      controls: mysqlReaderControls(fresh.database, store.tableNames, store),
      leaseControls: mysqlLeaseControls(fresh.database, store.tableNames),
      cleanup: fresh.cleanup,
    };
  },
});

describeReaderConformance(harnessIn());

// INNODB_TRX shows start times in the server's system zone: a session in another zone must not move the horizon
describe.each([undefined, '-07:00', '+09:00'])('MariaDB (mysql2) reader horizon, session time zone %s', (timeZone) => {
  const harness = harnessIn(timeZone);
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
