/**
 * MariaDB and RabbitMQ under faults: relays run as processes of their own (test/support/relay-child.ts) and
 * connect as a MariaDB user of their own, so that their sessions can be found and killed; writers enqueue keyed
 * messages (some rolled back) in the test's process. Each scenario checks that every committed message arrives,
 * nothing rolled back does, and no key is delivered out of order. The broker outage goes through a TCP proxy in
 * front of the relays only: the machine's RabbitMQ is shared.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import type { MysqlQueryable } from '../../src/stores/mysql/database.js';
import { MysqlOutboxStore, type MysqlTransaction } from '../../src/stores/mysql/mysql-store.js';
import { mysqlTableNames } from '../../src/stores/mysql/table-names.js';
import { type BrokerRig, rabbitMqRig } from '../support/broker-rigs.js';
import { startWriters, type WriteTransaction, type WriterLoad } from '../support/keyed-writers.js';
import { freshMysqlDatabase, type FreshMysqlDatabase } from '../support/mysql-database.js';
import { checkDeliveries, type DeliveryReport } from '../support/order-checker.js';
import { childBrokerOf, type RelayChild, relayChildren } from '../support/relay-child.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

const names = mysqlTableNames('outbox');
const SCENARIO_MS = 60_000;

describe('MariaDB and RabbitMQ under faults', () => {
  let fresh: FreshMysqlDatabase | undefined;
  let rig: BrokerRig | undefined;
  let proxy: TcpProxy | undefined;
  let load: WriterLoad | undefined;
  const cleanups: (() => Promise<unknown>)[] = [];
  const children = relayChildren('test/support/dialects/mariadb/mysql-relay-child.ts');
  afterEach(async () => {
    await load?.stop();
    await children.stopAll();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await proxy?.close();
    await rig?.cleanup();
    await fresh?.cleanup();
    [fresh, rig, proxy, load] = [undefined, undefined, undefined, undefined];
  });

  async function setup() {
    fresh = await freshMysqlDatabase('chaos_my');
    rig = await rabbitMqRig();
    const store = new MysqlOutboxStore(fresh.database);
    await store.migrate();
    const outbox = new Outbox<MysqlTransaction, MysqlOutboxStore>(store);
    const { pool, sql } = fresh;
    const write: WriteTransaction = async (messages, rollback) => {
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
    // the relays' own user: all rights on the test's database, and PROCESS for the late-commit horizon
    const user = `ob_relay_${randomBytes(4).toString('hex')}`;
    const password = randomBytes(9).toString('hex');
    await sql("CREATE USER ?@'127.0.0.1' IDENTIFIED BY ?", [user, password]);
    cleanups.push(() => sql("DROP USER IF EXISTS ?@'127.0.0.1'", [user]));
    await sql(`GRANT ALL PRIVILEGES ON \`${fresh.name}\`.* TO ?@'127.0.0.1'`, [user]);
    await sql("GRANT PROCESS ON *.* TO ?@'127.0.0.1'", [user]);
    const url = new URL(fresh.url);
    [url.username, url.password] = [user, password];
    const f = fresh;
    const r = rig;
    const start = (name: string, brokerPort?: number) => children.start({ database: url.toString(), broker: childBrokerOf(r, brokerPort), name });
    const holdings = async () => {
      const rows = await sql(`SELECT owner, COUNT(*) AS n FROM ${names.partitions} WHERE owner IS NOT NULL GROUP BY owner`);
      return new Map(rows.map((row) => [String(row.owner), Number(row.n)]));
    };
    const holding = async (...relays: RelayChild[]) => {
      const held = await holdings();
      const total = [...held.values()].reduce((sum, n) => sum + n, 0);
      return held.size === relays.length && total === 64 && relays.every((child) => (held.get(child.relayId ?? '') ?? 0) > 0);
    };
    const sessions = async () => (await sql('SELECT ID FROM information_schema.PROCESSLIST WHERE USER = ?', [user])).map((row) => Number(row.ID));
    /** Rethrows a timeout with what the database shows: rows left, and statements waiting for a lock. */
    const explain = async (error: Error): Promise<never> => {
      const waiting = await sql(
        "SELECT trx_mysql_thread_id AS thread, LEFT(trx_query, 60) AS query FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'",
      );
      const rows = await sql(`SELECT COUNT(*) AS n FROM ${names.outbox}`);
      const all = await sql("SELECT LEFT(INFO, 100) AS q, STATE AS s FROM information_schema.PROCESSLIST WHERE USER LIKE 'ob_relay%'");
      throw new Error(`${JSON.stringify(all)} ${error.message}; ${String(rows[0]?.n)} rows left; statements waiting for a lock: ${JSON.stringify(waiting)}`);
    };
    const left = async () => (await sql(`SELECT id FROM ${names.outbox} ORDER BY seq`)).map((row) => String(row.id));
    const startLoad = () => (load = startWriters(write, { writers: 4, topic: (w) => r.topic(`w${w}`) }));
    /** Waits until `count` more messages were committed than now, and all of them delivered. */
    const flowing = async (count: number, what: string) => {
      const from = (load as WriterLoad).expected.length;
      await waitFor(() => (load as WriterLoad).expected.length >= from + count, { what: `${count} more commits ${what}` });
      const ids = (load as WriterLoad).expected.slice(from, from + count).map((m) => m.id);
      await waitFor(() => ids.every((id) => r.deliveries.includes(id)), { what: `the ${count} messages committed ${what} delivered` }).catch(explain);
    };
    /** Stops the writers, waits for the drain, and checks: nothing lost, nothing rolled back delivered, no inversion. */
    const drainAndCheck = async (extra: readonly { id: string; key: string | null }[] = []): Promise<DeliveryReport> => {
      const writers = load as WriterLoad;
      await writers.stop();
      expect(writers.failures).toEqual([]);
      expect(writers.rolledBack.length).toBeGreaterThan(0);
      const expected = [...extra, ...writers.expected];
      await waitFor(() => expected.every((m) => r.deliveries.includes(m.id)), {
        timeoutMs: 30_000,
        what: `all ${expected.length} committed messages delivered`,
      }).catch(explain);
      await waitFor(async () => (await left()).length === 0, { what: 'every completion written' }).catch(explain);
      const report = checkDeliveries(expected, r.deliveries);
      expect(report.lost).toEqual([]);
      expect(report.phantom).toEqual([]);
      expect(report.orderInversions).toBe(0);
      const rolledBack = new Set(writers.rolledBack);
      expect(r.deliveries.filter((id) => rolledBack.has(id))).toEqual([]);
      return report;
    };
    return { fresh: f, rig: r, write, start, holdings, holding, sessions, left, explain, startLoad, flowing, drainAndCheck };
  }

  it(
    'a relay process SIGKILLed under a steady load: the survivor takes over after the lease, then shares again with a newcomer',
    async () => {
      const { start, holdings, holding, startLoad, flowing, drainAndCheck } = await setup();
      const [victim, survivor] = [start('victim'), start('survivor')];
      await Promise.all([victim.ready(), survivor.ready()]);
      await waitFor(() => holding(victim, survivor), { what: 'two relays sharing the 64 partitions' });
      startLoad();
      await flowing(80, 'with two relays');
      await victim.kill();
      await waitFor(async () => (await holdings()).get(survivor.relayId ?? '') === 64, {
        timeoutMs: 15_000,
        what: 'the survivor holding all 64 once the lease ran out',
      });
      await flowing(80, 'after the takeover');
      const newcomer = start('newcomer');
      await newcomer.ready();
      await waitFor(() => holding(survivor, newcomer), { timeoutMs: 15_000, what: 'the newcomer given a share by the survivor under load' });
      await flowing(80, 'after the newcomer joined');
      await drainAndCheck();
      expect([survivor.running, newcomer.running]).toEqual([true, true]);
    },
    SCENARIO_MS,
  );

  it(
    'KILL CONNECTION of every relay session, twice: the relays reconnect through their pools and go on',
    async () => {
      const { fresh, start, holding, sessions, startLoad, flowing, drainAndCheck } = await setup();
      const relays = [start('a'), start('b')];
      await Promise.all(relays.map((relay) => relay.ready()));
      await waitFor(() => holding(...relays), { what: 'two relays sharing the 64 partitions' });
      startLoad();
      await flowing(60, 'before the kills');
      const killed = new Set<number>();
      for (let round = 0; round < 2; round++) {
        const ids = await sessions();
        expect(ids.length).toBeGreaterThanOrEqual(2);
        for (const id of ids) {
          // a session may end by itself between the listing and the kill (the pool closed it)
          await fresh.sql(`KILL CONNECTION ${id}`).catch((error: { code?: string }) => expect(error.code).toBe('ER_NO_SUCH_THREAD'));
          killed.add(id);
        }
        await flowing(80, `after kill round ${round + 1}`);
        expect((await sessions()).some((id) => !killed.has(id))).toBe(true);
      }
      await drainAndCheck();
      expect(relays.map((relay) => relay.running)).toEqual([true, true]);
    },
    SCENARIO_MS,
  );

  it(
    'pending rows locked from outside (FOR UPDATE in an open transaction): other keys keep flowing, the locked rows complete once the lock ends',
    async () => {
      const { fresh, write, start, left, explain, startLoad, flowing, drainAndCheck, rig } = await setup();
      const hot = { topic: rig.topic('hot'), type: 'order.changed', key: 'hot' };
      const lockedIds = await write(
        [0, 1, 2].map((n) => ({ ...hot, payload: { n } })),
        false,
        0,
      );
      const holder = await mysql.createConnection({ uri: fresh.url });
      try {
        // row locks only: under REPEATABLE READ a locking read through a non-unique index also locks the gaps
        // around it, and the writers' inserts of other keys would wait for this lock as well
        await holder.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
        await holder.beginTransaction();
        const [rows] = await holder.query(`SELECT id FROM ${names.outbox} WHERE id IN (?) FOR UPDATE`, [lockedIds]);
        expect((rows as { id: string }[]).map((row) => row.id).sort()).toEqual([...lockedIds].sort());

        const relay = start('relay');
        await relay.ready();
        startLoad();
        await flowing(60, 'while the rows are locked');
        const behind = await write(
          [3, 4].map((n) => ({ ...hot, payload: { n } })),
          false,
          0,
        ); // same key, committed behind the lock
        await flowing(60, 'while the rows are locked, later');
        await waitFor(() => [...lockedIds, ...behind].every((id) => rig.deliveries.includes(id)), {
          what: 'the locked rows and those behind them published, without waiting for the lock',
        });
        await (load as WriterLoad).stop();
        await waitFor(async () => (await left()).length === lockedIds.length, { what: 'every row but the locked ones completed' }).catch(explain);
        expect(await left()).toEqual(lockedIds);

        await holder.commit();
        const hotExpected = [...lockedIds, ...behind].map((id) => ({ id, key: 'hot' }));
        await drainAndCheck(hotExpected);
        // published once while locked, not again for a completion the lock held back
        expect(lockedIds.map((id) => rig.deliveries.filter((d) => d === id).length)).toEqual([1, 1, 1]);
        expect(relay.running).toBe(true);
      } finally {
        await holder.end(); // rolls back what a failure left open
      }
    },
    SCENARIO_MS,
  );

  it(
    'a broker outage between the relays and RabbitMQ: publishes fail, writes go on, everything arrives once it is back',
    async () => {
      const { start, holding, startLoad, flowing, drainAndCheck } = await setup();
      proxy = await TcpProxy.start(5672);
      const broker = proxy;
      const relays = [start('a', broker.port), start('b', broker.port)];
      await Promise.all(relays.map((relay) => relay.ready()));
      await waitFor(() => holding(...relays), { what: 'two relays sharing the 64 partitions' });
      startLoad();
      await flowing(60, 'before the outage');
      broker.setMode('refuse');
      const during = (load as WriterLoad).expected.length;
      const failing = /OUTBOXER_(BROKER_UNAVAILABLE|PUBLISH_TIMEOUT)/;
      await waitFor(() => relays.every((relay) => failing.test(relay.logs)), { what: 'both relays failing to publish' });
      await waitFor(() => (load as WriterLoad).expected.length >= during + 400, { what: 'writes going on during the outage' });
      broker.setMode('forward');
      await flowing(80, 'after the outage');
      await drainAndCheck();
      expect(relays.map((relay) => relay.running)).toEqual([true, true]);
    },
    SCENARIO_MS,
  );
});
