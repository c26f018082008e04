import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import type { Relay } from '../../src/core/relay.js';
import type { MysqlQueryable } from '../../src/stores/mysql/database.js';
import { MysqlOutboxStore, type MysqlTransaction } from '../../src/stores/mysql/mysql-store.js';
import { mysqlTableNames } from '../../src/stores/mysql/table-names.js';
import { type BrokerRig, natsRig, rabbitMqRig } from '../support/broker-rigs.js';
import { startWriters, type WriteTransaction } from '../support/keyed-writers.js';
import { freshMysqlDatabase, type FreshMysqlDatabase } from '../support/mysql-database.js';
import { checkDeliveries } from '../support/order-checker.js';
import { childBrokerOf, childTiming, relayChildren } from '../support/relay-child.js';
import { waitFor } from '../support/wait-for.js';
import { wireProbe, type WireProbe } from '../support/wire-probe.js';

const names = mysqlTableNames('outbox');

/** Thrown inside a transaction that must roll back, carrying what the enqueue returned. */
class RolledBack extends Error {
  constructor(readonly ids: readonly string[]) {
    super('rolled back by the test');
  }
}

describe.each([
  ['RabbitMQ', rabbitMqRig],
  ['NATS JetStream', natsRig],
])('MariaDB outbox -> %s end to end', (_name, makeRig) => {
  let fresh: FreshMysqlDatabase | undefined;
  let rig: BrokerRig | undefined;
  let probe: WireProbe | undefined;
  const children = relayChildren('mysql');
  const relays: Relay[] = [];
  afterEach(async () => {
    await children.stopAll();
    await Promise.all(relays.splice(0).map((relay) => relay.stop()));
    await probe?.close();
    await rig?.cleanup();
    await fresh?.cleanup();
    [fresh, rig, probe] = [undefined, undefined, undefined];
  });

  async function setup() {
    fresh = await freshMysqlDatabase('e2e_my');
    rig = await makeRig();
    const store = new MysqlOutboxStore(fresh.database);
    await store.migrate();
    const outbox = new Outbox<MysqlTransaction, MysqlOutboxStore>(store);
    const pool = fresh.pool;
    const database = fresh.database;
    // even writers on their own mysql2 connection inside beginTransaction(), odd ones through outbox.transaction
    const write: WriteTransaction = async (messages, rollback, writer) => {
      if (writer % 2 === 1) {
        try {
          return await outbox.transaction(database, async (tx) => {
            const ids = await outbox.enqueueMany(tx, messages);
            if (rollback) throw new RolledBack(ids);
            return ids;
          });
        } catch (error) {
          if (error instanceof RolledBack) return error.ids;
          throw error;
        }
      }
      const conn = await pool.getConnection();
      try {
        await conn.beginTransaction();
        const ids = await outbox.enqueueMany(conn as unknown as MysqlQueryable, messages);
        await (rollback ? conn.rollback() : conn.commit());
        return ids;
      } catch (error) {
        await conn.rollback().catch(() => undefined);
        throw error;
      } finally {
        conn.release();
      }
    };
    const sql = fresh.sql;
    const holdings = async () => {
      const rows = await sql(`SELECT owner, COUNT(*) AS n FROM ${names.partitions} WHERE owner IS NOT NULL GROUP BY owner`);
      return new Map(rows.map((row) => [String(row.owner), Number(row.n)]));
    };
    const left = async () => Number((await sql(`SELECT COUNT(*) AS n FROM ${names.outbox}`))[0]?.n);
    return { fresh, rig, outbox, write, holdings, left };
  }

  it('one of two relay processes SIGKILLed mid-stream: the other takes its partitions after the lease; every commit delivered, no rollback, key order kept', async () => {
    const { fresh, rig, write, holdings, left } = await setup();
    const config = (name: string) => ({ database: fresh.url, broker: childBrokerOf(rig), name });
    const [victim, survivor] = [children.start(config('victim')), children.start(config('survivor'))];
    await Promise.all([victim.ready(), survivor.ready()]);
    await waitFor(
      async () => {
        const held = await holdings();
        return held.size === 2 && held.get(victim.relayId ?? '') === 32 && held.get(survivor.relayId ?? '') === 32;
      },
      { what: 'the two relays holding 32 partitions each' },
    );

    const load = startWriters(write, { writers: 4, topic: (w) => rig.topic(`w${w}`) });
    await waitFor(() => new Set(rig.deliveries).size >= 60, { what: 'messages flowing through both relays' });
    await victim.kill();
    const atKill = load.expected.length;
    await waitFor(
      async () => {
        const held = await holdings();
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
    await waitFor(async () => (await left()) === 0, { what: 'every completion written' });
    const report = checkDeliveries(load.expected, rig.deliveries);
    expect(report.lost).toEqual([]);
    expect(report.phantom).toEqual([]);
    expect(report.orderInversions).toBe(0);
    const rolledBack = new Set(load.rolledBack);
    expect(rig.deliveries.filter((id) => rolledBack.has(id))).toEqual([]);
    expect(survivor.running).toBe(true);
  });

  it('delivers a row inserted by plain SQL on the same wire as an enqueue of the same message', async () => {
    const { fresh, rig, outbox, write } = await setup();
    const topic = rig.topic('wire');
    probe = await wireProbe(rig, topic);
    const body = { orderId: 7, customer: 'Müller', total: '9.90' };
    await fresh.sql('INSERT INTO outbox (topic, type, payload, `key`) VALUES (?, ?, ?, ?)', [topic, 'order.created', JSON.stringify(body), 'order-7']);
    const [enqueued] = await write([{ topic, type: 'order.created', key: 'order-7', payload: body }], false, 0);
    const [fromSql] = (await fresh.sql('SELECT id FROM outbox WHERE id <> ?', [enqueued])).map((row) => String(row.id));
    const relay = outbox.createRelay(rig.publisher(), childTiming);
    relays.push(relay);
    relay.start();

    const seen = probe.deliveries;
    await waitFor(() => seen.length >= 2, { what: 'both messages on the wire' });
    expect(seen.map((d) => d.message.id)).toEqual([fromSql, enqueued]); // one key: in seq order
    const [sqlRow, enqueue] = seen;
    expect(sqlRow?.wire).toEqual(enqueue?.wire);
    expect({ ...sqlRow?.message, id: '' }).toEqual({ ...enqueue?.message, id: '' });
    expect(sqlRow?.message).toMatchObject({ type: 'order.created', key: 'order-7', topic, contentType: 'application/json', headers: {}, payload: body });
    await waitFor(() => [fromSql, enqueued].every((id) => rig.deliveries.includes(id as string)), { what: "the rig's consumer getting both" });
  });
});
