import { afterEach, describe, expect, it } from 'vitest';
import type { ResizeProgress } from '../../src/core/ports/partition-engine.js';
import { cancelResize, resizePartitions } from '../../src/stores/postgres/engine/resize-partitions.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { PortRelay, type PortDelivery } from '../conformance/lease-port-relay.js';
import { msg } from '../conformance/store-conformance.js';
import { pgliteSchema, postgresSchema, type SchemaDatabase } from '../support/schema-databases.js';
import { waitFor } from '../support/wait-for.js';

const databases: [string, (prefix: string) => Promise<SchemaDatabase>][] = [
  ['PostgreSQL (pg)', postgresSchema],
  ['PGlite (embedded)', pgliteSchema],
];

for (const [label, open] of databases) {
  describe(`partition resize (${label})`, () => {
    let db: SchemaDatabase | undefined;
    let stopped = true;
    afterEach(async () => {
      stopped = true;
      await db?.cleanup();
      db = undefined;
    });

    async function setup() {
      db = await open('resize');
      const store = new PostgresOutboxStore(db.database, { schema: db.schema });
      await store.migrate();
      const sql = db.sql;
      const schema = db.schema;
      const partitionIndexes = async () =>
        (await sql(`SELECT relname FROM pg_class WHERE relnamespace = $1::regnamespace AND relname ~ '^outbox_p[0-9]' ORDER BY 1`, [`"${schema}"`])).map(
          (r) => r.relname,
        );
      const insert = async (count: number, tag: string) =>
        db!.database.transaction((tx) =>
          store.insert(
            tx,
            Array.from({ length: count }, (_, i) => msg('t', i % 3 === 0 ? null : `${tag}${i % 7}`, { tag, i })),
          ),
        );
      return { store, database: db.database, name: store.tableName, sql, schema, partitionIndexes, insert };
    }

    it('moves to generation 2 with the new count once relays gave everything back; rows written meanwhile are read under the new count', async () => {
      const { store, database, name, sql, schema, partitionIndexes, insert } = await setup();
      const before = await insert(40, 'b');
      const deliveries: PortDelivery[] = [];
      const relays = [new PortRelay(store, deliveries, { name: 'a', maxPartitions: 32 }), new PortRelay(store, deliveries, { name: 'b', maxPartitions: 32 })];
      for (const relay of relays) await relay.join();
      for (const relay of relays) await relay.step();
      expect(relays.map((r) => r.held.length)).toEqual([32, 32]);
      const oldEpoch = Math.max(...relays.flatMap((r) => r.grants.map((g) => Number(g.lease.epoch))));

      const during: string[] = [];
      const progress: ResizeProgress[] = [];
      let loops: Promise<void>[] | undefined;
      const resizing = resizePartitions(database, name, {
        partitions: 16,
        pollMs: 20,
        onProgress: (p) => {
          progress.push(p);
          if (p.step !== 'waiting' || loops !== undefined) return;
          loops = [];
          // rows committed while the resize waits (relays still hold everything), then the relays go on stepping
          void insert(25, 'd').then((ids) => {
            during.push(...ids);
            stopped = false;
            loops = relays.map((r) => r.run(() => stopped));
          });
        },
      });
      const result = await resizing;
      expect(result).toMatchObject({ from: 64, to: 16, generation: 2, changed: true, resumed: false });
      expect(result.droppedIndexes).toEqual(['outbox_p64_due_idx', 'outbox_p64_idx']);
      expect(progress.map((p) => p.step)).toEqual(expect.arrayContaining(['indexes', 'waiting', 'switched', 'dropped']));
      expect(await partitionIndexes()).toEqual(['outbox_p16_due_idx', 'outbox_p16_idx']);

      await waitFor(() => during.length === 25, { what: 'the inserts made during the resize' });
      const after = await insert(25, 'a');
      const all = [...before, ...during, ...after];
      const deliveredIds = () => new Set(deliveries.map((d) => d.message.id));
      await waitFor(() => all.every((id) => deliveredIds().has(id)), { what: 'every row published' });
      stopped = true;
      await Promise.all(loops ?? []);

      const view = await store.leases.membership(relays[0]!.relayId);
      expect(view.config).toEqual({ partitionCount: 16, generation: 2, resizeTo: null, grantsOpen: true });
      expect(relays.reduce((n, r) => n + r.held.length, 0)).toBe(16);
      const newGrants = relays.flatMap((r) => r.grants.filter((g) => g.generation === 2).map((g) => Number(g.lease.epoch)));
      expect(Math.min(...newGrants)).toBeGreaterThan(oldEpoch);
      const late = deliveries.filter((d) => [...during, ...after].includes(d.message.id));
      expect(late.every((d) => d.partitionCount === 16)).toBe(true);
      const mapped = await sql(
        `SELECT u.id::text AS id, "${schema}".outboxer_partition(u.key, u.id, 16) AS p FROM unnest($1::uuid[], $2::text[]) AS u(id, key)`,
        [late.map((d) => d.message.id), late.map((d) => d.message.key)],
      );
      expect(mapped).toHaveLength(50);
      for (const row of mapped) expect(late.find((d) => d.message.id === row.id)?.message.partition).toBe(row.p);
      expect(Number((await sql(`SELECT count(*) AS n FROM "${schema}".outbox WHERE state = 'pending'`))[0]?.n)).toBe(0);
      for (const relay of relays) await relay.leave();
    });

    it('a resize left waiting (its process gone) keeps grants closed until it is run again or cancelled', async () => {
      const { store, database, name, partitionIndexes } = await setup();
      const deliveries: PortDelivery[] = [];
      const holder = new PortRelay(store, deliveries, { name: 'holder' });
      await holder.join();
      await holder.step();
      expect(holder.held).toHaveLength(64);

      await expect(resizePartitions(database, name, { partitions: 8, waitTimeoutMs: 1, pollMs: 1 })).rejects.toMatchObject({
        code: 'OUTBOXER_RESIZE_TIMEOUT',
        message: expect.stringContaining('1 relay(s) still hold 64 partition(s)'),
      });
      const other = await store.leases.join({ name: 'other', leaseMs: 60_000 });
      expect(other.config).toMatchObject({ partitionCount: 64, resizeTo: 8, grantsOpen: false });
      await expect(resizePartitions(database, name, { partitions: 4 })).rejects.toMatchObject({ code: 'OUTBOXER_RESIZE_IN_PROGRESS' });
      expect(await partitionIndexes()).toEqual(['outbox_p64_due_idx', 'outbox_p64_idx', 'outbox_p8_due_idx', 'outbox_p8_idx']);

      expect(await cancelResize(database, name)).toEqual({ cancelled: 8, droppedIndexes: ['outbox_p8_due_idx', 'outbox_p8_idx'] });
      expect((await store.leases.membership(other.relayId)).config).toMatchObject({ partitionCount: 64, resizeTo: null, grantsOpen: true });
      expect(await cancelResize(database, name)).toEqual({ cancelled: null, droppedIndexes: [] });

      await expect(resizePartitions(database, name, { partitions: 8, waitTimeoutMs: 1, pollMs: 1 })).rejects.toMatchObject({ code: 'OUTBOXER_RESIZE_TIMEOUT' });
      await holder.step(); // sees resizeTo and gives everything back
      expect(holder.held).toEqual([]);
      const resumed = await resizePartitions(database, name, { partitions: 8 });
      expect(resumed).toMatchObject({ from: 64, to: 8, generation: 2, changed: true, resumed: true });
      expect(await resizePartitions(database, name, { partitions: 8 })).toMatchObject({ changed: false, generation: 2, droppedIndexes: [] });
      await holder.step();
      expect(holder.held).toHaveLength(8);
    });

    it('a resize cancelled while it waits says so; two resizes to one count at once both end at that count', async () => {
      const { store, database, name } = await setup();
      const holder = new PortRelay(store, [], { name: 'holder' });
      await holder.join();
      await holder.step();
      const waiting: ResizeProgress[] = [];
      const first = resizePartitions(database, name, { partitions: 8, pollMs: 10, onProgress: (p) => waiting.push(p) });
      first.catch(() => undefined);
      await waitFor(() => waiting.some((p) => p.step === 'waiting'), { what: 'the resize to wait for the holder' });
      expect(await cancelResize(database, name)).toMatchObject({ cancelled: 8 });
      await expect(first).rejects.toMatchObject({ code: 'OUTBOXER_RESIZE_CANCELLED', message: expect.stringContaining('the count stays 64') });

      const both = [resizePartitions(database, name, { partitions: 4, pollMs: 10 }), resizePartitions(database, name, { partitions: 4, pollMs: 10 })];
      await waitFor(async () => (await store.leases.membership(holder.relayId)).config.resizeTo === 4, { what: 'resize_to to be set' });
      await holder.step();
      const results = await Promise.all(both);
      expect(results.map((r) => [r.to, r.generation])).toEqual([
        [4, 2],
        [4, 2],
      ]);
      expect((await store.leases.membership(holder.relayId)).config).toMatchObject({ partitionCount: 4, generation: 2, resizeTo: null });
    });

    it('does not wait for a holder whose lease ran out, and that holder can no longer complete', async () => {
      const { store, database, name, sql, schema, insert } = await setup();
      const deliveries: PortDelivery[] = [];
      const dead = new PortRelay(store, deliveries, { name: 'dead' });
      await dead.join();
      await dead.step();
      await sql(`UPDATE "${schema}".outbox_relays SET expires_at = now() - interval '1 second' WHERE relay_id = $1`, [dead.relayId]);
      const [id] = await insert(1, 'y');
      expect(await resizePartitions(database, name, { partitions: 2 })).toMatchObject({ changed: true, generation: 2 });
      const { lease } = dead.grants.find((g) => g.lease.partition === 0)!;
      expect(await store.reader.complete(dead.relayId, [{ ...lease, published: [id!], failed: [], held: [] }])).toEqual([
        { partition: 0, epoch: lease.epoch, applied: false, changed: 0, skipped: [] },
      ]);
      const survivor = new PortRelay(store, deliveries, { name: 'survivor' });
      await survivor.join();
      await survivor.step();
      expect(deliveries.map((d) => [d.message.id, d.relay, d.partitionCount])).toEqual([[id, 'survivor', 2]]);
    });

    it('a read with the count from before the resize reads nothing, the new count reads the rows', async () => {
      const { store, database, name, insert } = await setup();
      await resizePartitions(database, name, { partitions: 2 });
      await insert(60, 'r');
      const relay = await store.leases.join({ name: 'stale', leaseMs: 60_000 });
      const requests = (await store.leases.acquire(relay.relayId, 2)).map((l) => ({ ...l, after: null, recheck: null, limit: 100 }));
      expect((await store.reader.read(relay.relayId, 64, requests)).messages).toEqual([]);
      expect((await store.reader.read(relay.relayId, 2, requests)).messages).toHaveLength(60);
    });

    it('refuses a count outside 1 to 1024, and a resize to the current count changes nothing', async () => {
      const { database, name } = await setup();
      for (const partitions of [0, 1025, 1.5]) {
        await expect(resizePartitions(database, name, { partitions })).rejects.toMatchObject({ code: 'OUTBOXER_INVALID_OPTION' });
      }
      expect(await resizePartitions(database, name, { partitions: 64 })).toEqual({
        from: 64,
        to: 64,
        generation: 1,
        changed: false,
        resumed: false,
        droppedIndexes: [],
      });
    });
  });
}
