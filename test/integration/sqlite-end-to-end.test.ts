import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import type { Relay } from '../../src/core/relay.js';
import type { SqliteHandle } from '../../src/stores/sqlite/database.js';
import { sqliteTableNames } from '../../src/stores/sqlite/table-names.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { type BrokerRig, natsRig, rabbitMqRig } from '../support/broker-rigs.js';
import { startWriters, type WriteTransaction } from '../support/keyed-writers.js';
import { checkDeliveries } from '../support/order-checker.js';
import { mqttRig } from '../support/mqtt-rig.js';
import { redisRig } from '../support/redis-rig.js';
import { childBrokerOf, childTiming, relayChildren } from '../support/relay-child.js';
import { freshSqliteFile, type FreshSqliteFile } from '../support/sqlite-file.js';
import { waitFor } from '../support/wait-for.js';
import { wireProbe, type WireProbe } from '../support/wire-probe.js';

const names = sqliteTableNames('outbox');

/** Thrown inside a transaction that must roll back, carrying what the enqueue returned. */
class RolledBack extends Error {
  constructor(readonly ids: readonly string[]) {
    super('rolled back by the test');
  }
}

// The wire probe reads RabbitMQ and NATS as our consumers do; the other brokers' wire is read by clients we did not
// write in their publishers' own tests.
describe.each([
  { name: 'RabbitMQ', makeRig: rabbitMqRig, probed: true },
  { name: 'NATS JetStream', makeRig: natsRig, probed: true },
  { name: 'MQTT (Mosquitto)', makeRig: mqttRig, probed: false },
  { name: 'Redis Streams', makeRig: redisRig, probed: false },
])('SQLite outbox -> $name end to end', ({ makeRig, probed }) => {
  let file: FreshSqliteFile | undefined;
  let rig: BrokerRig | undefined;
  let probe: WireProbe | undefined;
  const children = relayChildren('sqlite');
  const relays: Relay[] = [];
  afterEach(async () => {
    await children.stopAll();
    await Promise.all(relays.splice(0).map((relay) => relay.stop()));
    await probe?.close();
    await rig?.cleanup();
    await file?.cleanup();
    [file, rig, probe] = [undefined, undefined, undefined];
  });

  async function setup() {
    file = freshSqliteFile('e2e');
    rig = await makeRig();
    const store = new SqliteOutboxStore(file.database());
    await store.migrate();
    const outbox = new Outbox<SqliteHandle, SqliteOutboxStore>(store);
    // each writer on a connection of its own, as separate application processes or requests would be
    const writers = Array.from({ length: 4 }, () => (file as FreshSqliteFile).database());
    const write: WriteTransaction = async (messages, rollback, writer) => {
      const db = writers[writer] as (typeof writers)[number];
      try {
        return await db.transaction(async (tx) => {
          const ids = await outbox.enqueueMany(tx, messages);
          if (rollback) throw new RolledBack(ids);
          return ids;
        });
      } catch (error) {
        if (error instanceof RolledBack) return error.ids;
        throw error;
      }
    };
    const reader = file.connect();
    const holdings = () => {
      const rows = reader.prepare(`SELECT owner, count(*) AS n FROM ${names.partitions} WHERE owner IS NOT NULL GROUP BY owner`).all() as {
        owner: string;
        n: number;
      }[];
      return new Map(rows.map((row) => [row.owner, row.n]));
    };
    const left = () => (reader.prepare(`SELECT count(*) AS n FROM ${names.outbox}`).get() as { n: number }).n;
    return { file, rig, outbox, write, holdings, left, reader };
  }

  it('one of two relay processes SIGKILLed mid-stream: the other takes its partitions after the lease; every commit delivered, no rollback, key order kept', async () => {
    const { file, rig, write, holdings, left } = await setup();
    const config = (name: string) => ({ database: file.path, broker: childBrokerOf(rig), name });
    const [victim, survivor] = [children.start(config('victim')), children.start(config('survivor'))];
    await Promise.all([victim.ready(), survivor.ready()]);
    await waitFor(
      () => {
        const held = holdings();
        return held.size === 2 && held.get(victim.relayId ?? '') === 32 && held.get(survivor.relayId ?? '') === 32;
      },
      { what: 'the two relays holding 32 partitions each' },
    );

    const load = startWriters(write, { writers: 4, topic: (w) => rig.topic(`w${w}`) });
    await waitFor(() => new Set(rig.deliveries).size >= 60, { what: 'messages flowing through both relays' });
    await victim.kill();
    const atKill = load.expected.length;
    await waitFor(
      () => {
        const held = holdings();
        return held.size === 1 && held.get(survivor.relayId ?? '') === 64;
      },
      { timeoutMs: 15_000, what: 'the survivor holding all 64 partitions once the lease ran out' },
    );
    await waitFor(() => load.expected.length >= atKill + 60, { what: 'writes going on after the takeover' });
    await load.stop();

    expect(load.failures).toEqual([]);
    expect(load.rolledBack.length).toBeGreaterThan(0);
    const committed = new Set(load.expected.map((m) => m.id));
    await waitFor(() => [...committed].every((id) => rig.deliveries.includes(id)), {
      timeoutMs: 20_000,
      what: `all ${committed.size} committed messages delivered`,
    });
    await waitFor(() => left() === 0, { what: 'every completion written' });
    const report = checkDeliveries(load.expected, rig.deliveries);
    expect(report.lost).toEqual([]);
    expect(report.phantom).toEqual([]);
    expect(report.orderInversions).toBe(0);
    const rolledBack = new Set(load.rolledBack);
    expect(rig.deliveries.filter((id) => rolledBack.has(id))).toEqual([]);
    expect(survivor.running).toBe(true);
  });

  if (probed)
    it('delivers a row inserted by plain SQL on the same wire as an enqueue of the same message', async () => {
      const { rig, outbox, write, reader } = await setup();
      const topic = rig.topic('wire');
      probe = await wireProbe(rig, topic);
      const body = { orderId: 7, customer: 'Müller', total: '9.90' };
      const inserted = reader
        .prepare('INSERT INTO outbox (topic, type, payload, "key") VALUES (?, ?, ?, ?) RETURNING id')
        .get(topic, 'order.created', JSON.stringify(body), 'order-7') as { id: string };
      const [enqueued] = await write([{ topic, type: 'order.created', key: 'order-7', payload: body }], false, 0);
      const relay = outbox.createRelay(rig.publisher(), childTiming);
      relays.push(relay);
      relay.start();

      const seen = probe.deliveries;
      await waitFor(() => seen.length >= 2, { what: 'both messages on the wire' });
      expect(seen.map((d) => d.message.id)).toEqual([inserted.id, enqueued]); // one key: in seq order
      const [sqlRow, enqueue] = seen;
      expect(sqlRow?.wire).toEqual(enqueue?.wire);
      expect({ ...sqlRow?.message, id: '' }).toEqual({ ...enqueue?.message, id: '' });
      expect(sqlRow?.message).toMatchObject({ type: 'order.created', key: 'order-7', topic, contentType: 'application/json', headers: {}, payload: body });
      await waitFor(() => [inserted.id, enqueued].every((id) => rig.deliveries.includes(id as string)), { what: "the rig's consumer getting both" });
    });
});
