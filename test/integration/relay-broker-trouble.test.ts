import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { rabbitMqRig, type BrokerRig } from '../support/broker-rigs.js';
import { checkDeliveries } from '../support/order-checker.js';
import { holdings, relayPool } from '../support/partition-relay-fixture.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { cliEnv, runCli } from '../support/cli-runner.js';
import { closedPort } from '../support/rabbitmq-harness.js';
import { services } from '../support/services.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

/**
 * A relay that cannot reach its broker gives its partitions to one that can (docs/design/lease-protocol.md,
 * "Hand-over and broker trouble"), over real PostgreSQL and RabbitMQ, the broker cut off by a TCP proxy for one relay only.
 */
describe('relays whose broker is unreachable', () => {
  let fixture: PostgresFixture | undefined;
  let rig: BrokerRig | undefined;
  const proxies: TcpProxy[] = [];
  const relays = relayPool();
  afterEach(async () => {
    await relays.stopAll();
    await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
    await rig?.cleanup();
    await fixture?.cleanup();
    fixture = undefined;
    rig = undefined;
  });

  async function setup() {
    fixture = await createPostgresFixture();
    rig = await rabbitMqRig();
    const f = fixture;
    const outbox = new Outbox<SqlExecutor>(f.store);
    const db = fromPgPool(f.pool);
    const expected: { id: string; key: string | null }[] = [];
    let n = 0;
    const enqueue = async (count: number) => {
      const batch = Array.from({ length: count }, () => ({ topic: (rig as BrokerRig).topic('t'), type: 'x', key: `k${n % 40}`, payload: n++ }));
      const ids = await outbox.transaction(db, (tx) => outbox.enqueueMany(tx, batch));
      ids.forEach((id, i) => expected.push({ id, key: batch[i]?.key ?? null }));
    };
    const delivered = (r: BrokerRig) => new Set(r.deliveries);
    const allDelivered = () => {
      const seen = delivered(rig as BrokerRig);
      return expected.every((m) => seen.has(m.id));
    };
    const proxy = async () => {
      const p = await TcpProxy.start(5672);
      proxies.push(p);
      return p;
    };
    return { f, r: rig, enqueue, expected, allDelivered, proxy };
  }

  const options = { brokerTroubleAfterMs: 1000, handoverCheckMs: 100 } as const;

  it('gives every partition to the healthy relay within about a lease of the cut, nothing lost or reordered, and takes its share back once its broker returns', async () => {
    const { f, r, enqueue, expected, allDelivered, proxy } = await setup();
    const cut = await proxy();
    const healthy = relays.make(f.store, r.publisher(), options);
    const troubled = relays.make(f.store, r.publisher(cut.port), options);
    await waitFor(async () => [...(await holdings(f)).values()].join() === '32,32', { what: 'two shares of 32' });
    await enqueue(200);
    await waitFor(allDelivered, { what: 'the first 200 messages through both relays' });

    cut.setMode('refuse');
    const cutAt = performance.now();
    await enqueue(200);
    await waitFor(async () => (await holdings(f)).get(healthy.relayId as string) === 64, { timeoutMs: 3000 + 5000, what: 'the healthy relay holding all 64' });
    const servedAfterMs = performance.now() - cutAt;
    await waitFor(allDelivered, { timeoutMs: 10_000, what: 'every message written during the cut' });
    const group = await f.store.relayGroup();
    expect(group.relays.find((m) => m.id === troubled.relayId)?.trouble?.reason).toMatch(/broker/);
    expect(group.relays.find((m) => m.id === troubled.relayId)?.partitions).toEqual([]);

    cut.setMode('forward');
    await waitFor(async () => [...(await holdings(f)).values()].join() === '32,32', {
      timeoutMs: 15_000,
      what: 'the relay back to its share once its broker returns',
    });
    expect((await f.store.relayGroup()).relays.every((m) => m.trouble === null)).toBe(true);
    await enqueue(200);
    await waitFor(allDelivered, { what: 'the messages after the broker came back' });
    const report = checkDeliveries(expected, r.deliveries);
    expect({ lost: report.lost.length, phantom: report.phantom.length, inversions: report.orderInversions }).toEqual({ lost: 0, phantom: 0, inversions: 0 });
    // a lease is 3 s here: trouble after 1 s, then one drain and one group check
    expect(servedAfterMs).toBeLessThan(3000 + 1000);
  });

  it('takes no partition while its broker has never been reachable, and is shown in trouble', async () => {
    const { f, r, enqueue, allDelivered } = await setup();
    const healthy = relays.make(f.store, r.publisher(), options);
    await waitFor(async () => (await holdings(f)).get(healthy.relayId as string) === 64, { what: 'the healthy relay holding all 64' });
    const unreachable = relays.make(f.store, r.publisher(await closedPort()), options);
    await waitFor(async () => (await f.store.relayGroup()).relays.find((m) => m.id === unreachable.relayId)?.trouble?.reason, {
      what: 'the second relay shown in trouble',
    });
    await enqueue(100);
    await waitFor(allDelivered, { what: 'every message, through the healthy relay' });
    expect((await holdings(f)).get(unreachable.relayId as string)).toBeUndefined();
    expect(healthy.partitions).toHaveLength(64);
    const env = cliEnv({ OUTBOXER_DATABASE_URL: services.postgresUrl, OUTBOXER_SCHEMA: f.schema });
    const text = await runCli(['status'], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/broker trouble for \d+s: its broker has not been reachable since the relay started/);
    const json = await runCli(['status', '--json'], env);
    const listed = (JSON.parse(json.stdout) as { engine: { relays: { id: string; trouble: { reason: string; since: string } | null }[] } }).engine.relays;
    expect(listed.find((r) => r.id === unreachable.relayId)?.trouble?.reason).toMatch(/not been reachable/);
    expect(listed.find((r) => r.id === healthy.relayId)?.trouble).toBeNull();
  });

  it('moves nothing while every relay is in trouble', async () => {
    const { f, r, enqueue, allDelivered, proxy } = await setup();
    const [one, two] = [await proxy(), await proxy()];
    const a = relays.make(f.store, r.publisher(one.port), options);
    const b = relays.make(f.store, r.publisher(two.port), options);
    await waitFor(async () => [...(await holdings(f)).values()].join() === '32,32', { what: 'two shares of 32' });
    one.setMode('refuse');
    two.setMode('refuse');
    await enqueue(50);
    const settled = async () => {
      const group = await f.store.relayGroup();
      const { rows } = await f.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${f.schema}".outbox_partitions WHERE state <> 'owned'`);
      return group.relays.every((m) => m.trouble !== null) && group.unowned.length === 0 && rows[0]?.n === 0;
    };
    await waitFor(settled, { what: 'both relays in trouble, every partition owned, none draining' });
    const epochs = async () => (await f.pool.query<{ sum: string }>(`SELECT sum(epoch)::text AS sum FROM "${f.schema}".outbox_partitions`)).rows[0]?.sum;
    const before = await epochs();
    // an observation window of several group checks and beats (lease 3 s, beat 1 s, check 100 ms)
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await epochs()).toBe(before);
    expect(a.partitions.length + b.partitions.length).toBe(64);
    one.setMode('forward');
    two.setMode('forward');
    await waitFor(allDelivered, { timeoutMs: 15_000, what: 'every message once the brokers return' });
  });
});

describe('hand-over between relays', () => {
  let fixture: PostgresFixture | undefined;
  let rig: BrokerRig | undefined;
  const relays = relayPool();
  afterEach(async () => {
    await relays.stopAll();
    await rig?.cleanup();
    await fixture?.cleanup();
    fixture = undefined;
    rig = undefined;
  });

  /** Samples the partitions table until `done` and returns how long any partition had no owner. */
  async function unownedTime(f: PostgresFixture, act: () => Promise<void>, done: () => Promise<boolean>): Promise<number> {
    let unownedMs = 0;
    let last = performance.now();
    let acting = true;
    const acted = act().finally(() => (acting = false));
    for (;;) {
      const { rows } = await f.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${f.schema}".outbox_partitions WHERE owner IS NULL`);
      const now = performance.now();
      if ((rows[0]?.n ?? 0) > 0) unownedMs += now - last;
      last = now;
      if (!acting && (await done())) break;
    }
    await acted;
    return unownedMs;
  }

  it('a join and a graceful leave leave partitions unowned for well under a second, with beats 10 s apart', async () => {
    fixture = await createPostgresFixture();
    rig = await rabbitMqRig();
    const f = fixture;
    // lease 30 s: beats every 10 s, so only the group check can make a hand-over prompt
    const timing = { leaseMs: 30_000, publishTimeoutMs: 1000, handoverCheckMs: 100 } as const;
    const first = relays.make(f.store, rig.publisher(), timing);
    await waitFor(async () => (await holdings(f)).get(first.relayId as string) === 64, { what: 'the first relay holding all 64' });
    let second: ReturnType<typeof relays.make> | undefined;
    const join = await unownedTime(
      f,
      async () => {
        second = relays.make(f.store, (rig as BrokerRig).publisher(), timing);
      },
      async () => [...(await holdings(f)).values()].join() === '32,32',
    );
    const leave = await unownedTime(
      f,
      () => (second as ReturnType<typeof relays.make>).stop(),
      async () => (await holdings(f)).get(first.relayId as string) === 64,
    );
    expect(join).toBeLessThan(1000);
    expect(leave).toBeLessThan(1000);
  });
});
