import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import type { Relay } from '../../src/core/relay.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { type BrokerRig, natsRig, rabbitMqRig } from '../support/broker-rigs.js';
import { checkDeliveries } from '../support/order-checker.js';
import { createV1PostgresFixture } from '../support/engine-v1-table.js';
import type { PostgresFixture } from '../support/postgres-fixture.js';
import { services } from '../support/services.js';
import { waitFor } from '../support/wait-for.js';

const LEASE_MS = 3000;

/** Starts `outboxer relay` (engine v1, whose per-row leases this test watches) as its own process, the way it runs in production. */
function spawnRelay(schema: string, rig: BrokerRig): ChildProcess {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/ops/cli/main.ts', 'relay', '--engine', 'v1', '--database-url', services.postgresUrl, '--schema', schema,
      '--lease-ms', String(LEASE_MS), '--publish-timeout-ms', '1000', '--batch-size', '100', '--poll-interval-ms', '20', ...rig.cliArgs()],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  child.stderr?.resume();
  return child;
}

describe.each([
  ['RabbitMQ', rabbitMqRig],
  ['NATS JetStream', natsRig],
])('a relay process killed with SIGKILL mid-batch (%s)', (_name, makeRig) => {
  let fixture: PostgresFixture | undefined;
  let rig: BrokerRig | undefined;
  let child: ChildProcess | undefined;
  const relays: Relay[] = [];
  afterEach(async () => {
    child?.kill('SIGKILL');
    await Promise.all(relays.splice(0).map((r) => r.stop()));
    await rig?.cleanup();
    await fixture?.cleanup();
  });

  it('leaves nothing behind: after its lease expires another relay delivers everything, in key order', async () => {
    fixture = await createV1PostgresFixture();
    rig = await makeRig();
    const { schema, pool } = fixture;
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    const db = fromPgPool(pool);
    const expected: { id: string; key: string | null }[] = [];
    for (let txn = 0; txn < 40; txn++) {
      const batch = Array.from({ length: 100 }, (_, i) => ({ topic: rig!.topic('crash'), type: 'x', key: `k${(txn + i) % 25}`, payload: { txn, i } }));
      const ids = await db.transaction((tx) => outbox.enqueueMany(tx, batch));
      ids.forEach((id, i) => expected.push({ id, key: batch[i]?.key ?? null }));
    }
    const leasedNow = async () =>
      Number((await pool.query(`SELECT count(*)::int AS n FROM "${schema}".outbox WHERE lease_until > now()`)).rows[0].n);

    child = spawnRelay(schema, rig);
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child?.once('exit', (_code, signal) => resolve(signal)));
    const inFlightAtKill = await waitFor(async () => {
      if (rig!.deliveries.length < 200) return undefined;
      const leased = await leasedNow();
      if (leased === 0) return undefined;
      child?.kill('SIGKILL');
      return leased;
    }, { timeoutMs: 30_000, intervalMs: 5, what: 'the relay process to be mid-batch' });
    expect(await exited).toBe('SIGKILL');
    const deliveredBeforeTakeover = rig.deliveries.length;
    expect(deliveredBeforeTakeover).toBeLessThan(expected.length);

    const survivor = outbox.createRelay(rig.publisher(), { engine: 'v1', pollIntervalMs: 20, maxPollIntervalMs: 100, leaseMs: LEASE_MS, publishTimeoutMs: 1000 });
    relays.push(survivor);
    survivor.start();
    await waitFor(() => new Set(rig!.deliveries).size >= expected.length, { timeoutMs: 60_000, what: 'everything delivered' });
    await waitFor(async () => (await fixture!.store.stats()).inFlight === 0, { what: 'marks' });

    const report = checkDeliveries(expected, rig.deliveries);
    expect(report.lost).toEqual([]);
    expect(report.phantom).toEqual([]);
    expect(report.orderInversions).toBe(0);
    // Copies come only from what the killed relay held: what was leased when we counted, plus at most
    // one more batch it may have claimed between the count and the signal.
    expect(report.duplicates).toBeLessThanOrEqual(inFlightAtKill + 100);
    expect(await fixture.store.stats()).toMatchObject({ pending: 0, dead: 0 });
  });
});
