import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import type { Relay } from '../../src/core/relay.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { readEngineState } from '../../src/stores/postgres/engine/engine-state.js';
import { switchEngine } from '../../src/stores/postgres/engine/switch-engine.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { v2Timing } from '../support/partition-relay-fixture.js';
import { createV1PostgresFixture } from '../support/engine-v1-table.js';
import { OldV1Relay, oldV1Transaction, quotedTable } from '../support/old-v1-relay.js';
import type { PostgresFixture } from '../support/postgres-fixture.js';
import { RecordingPublisher } from '../support/recording-publisher.js';
import { services } from '../support/services.js';
import { waitFor } from '../support/wait-for.js';

describe('switch to engine v2 with relays of an older version (engine v1) and of this one running', () => {
  let fixture: PostgresFixture | undefined;
  const relays: (Relay | OldV1Relay)[] = [];
  const pools: pg.Pool[] = [];
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((r) => r.stop()));
    await Promise.all(pools.splice(0).map((p) => p.end()));
    await fixture?.cleanup();
    fixture = undefined;
  });

  it('v2 relays started before the switch wait for its fence, then publish every row the v1 relays did not; v1 gets nothing written after it', async () => {
    fixture = await createV1PostgresFixture();
    const { store, pool, schema } = fixture;
    const db = fromPgPool(pool);
    const table = quotedTable(store.tableName);
    const v1 = [new RecordingPublisher(), new RecordingPublisher()];
    const v2 = [new RecordingPublisher(), new RecordingPublisher()];
    const waited: string[] = [];
    const oldRelays = v1.map((p, i) => new OldV1Relay(db, table, p, { owner: `v1-${i}`, leaseMs: 8000, batchSize: 20, pollMs: 50 }));
    relays.push(...oldRelays);
    // v2 relays run as other processes would, on their own pool: a shared one is busy with writers and v1 relays
    const v2Pool = new pg.Pool({ connectionString: services.postgresUrl, max: 6 });
    pools.push(v2Pool);
    const v2Outbox = new Outbox<SqlExecutor>(new PostgresOutboxStore(fromPgPool(v2Pool), { schema }));
    // statement bounds (publishTimeoutMs) with room for a busy 2-core machine
    relays.push(...v2.map((p) => v2Outbox.createRelay(p, { ...v2Timing, leaseMs: 9000, publishTimeoutMs: 3000, hooks: { onWaitingForEngine: ({ engine }) => waited.push(engine) } })));
    for (const relay of relays) relay.start();

    const committed = new Set<string>();
    const afterSwitch: string[] = [];
    let switched = false;
    // each writer goes on until the switch, then writes 100 transactions more: a bounded backlog for the v2 relays
    const write = async (fastPath: boolean) => {
      for (let n = 0, after = 0; !switched || after < 100; n++, after += switched ? 1 : 0) {
        const startedAfterSwitch = switched;
        const batch = [{ topic: 't', key: `k${n % 7}`, payload: n }, { topic: 't', key: null, payload: n }];
        const ids = fastPath
          ? await oldV1Transaction(db, table, oldRelays[0]!, batch)
          : await db.transaction((tx) => v2Outbox.enqueueMany(tx, batch.map((m) => ({ ...m, type: 'x', key: m.key ?? undefined }))));
        for (const id of ids) committed.add(id);
        if (startedAfterSwitch) afterSwitch.push(...ids);
      }
    };
    const writers = [write(true), write(false)];
    const ids = (publishers: RecordingPublisher[]) => new Set(publishers.flatMap((p) => p.delivered.map((m) => m.id)));
    await waitFor(() => ids(v1).size >= 100, { what: 'v1 relays publishing' });
    expect(ids(v2).size).toBe(0);
    expect(waited).toContain('v1');
    v1[1]!.holdConfirms(); // a v1 relay mid-publish across the switch
    await waitFor(() => v1[1]!.inFlight > 0, { what: 'a v1 publish waiting for its confirm' });

    const result = await switchEngine(db, store.tableName, { engine: 'v2' });
    switched = true;
    expect(result.leased).toBeGreaterThan(0);
    v1[1]!.releaseConfirms();
    await waitFor(() => ids(v2).size > 0, { timeoutMs: 30_000, what: 'v2 relays publishing after the fence' });
    const delayed = (await pool.query(`INSERT INTO "${schema}".outbox (topic, key, type, payload, available_at)
      VALUES ('t', 'slow', 'x', '{}', now() + interval '1 hour') RETURNING id::text`)).rows[0].id as string;
    await Promise.all(writers);

    const published = () => new Set([...ids(v1), ...ids(v2)]);
    await waitFor(() => [...committed].every((id) => published().has(id)), { timeoutMs: 30_000, what: 'every committed row published' });
    await waitFor(async () => (await pool.query(`SELECT count(*)::int AS n FROM "${schema}".outbox WHERE state = 'pending'`)).rows[0].n === 1, { what: 'completions' });
    expect(published().has(delayed)).toBe(false);
    const grants = await pool.query(`SELECT bool_and(p.granted_at >= c.fence_until) AS after_fence, count(p.owner)::int AS owned
      FROM "${schema}".outbox_partitions p, "${schema}".outbox_partitioning c`);
    expect(grants.rows[0]).toEqual({ after_fence: true, owned: 64 });
    expect(afterSwitch.length).toBeGreaterThan(0);
    expect(afterSwitch.filter((id) => ids(v1).has(id))).toEqual([]);
    expect((await readEngineState(db, store.tableName)).lastV1ClaimFencedAt).not.toBeNull();

    await pool.query(`UPDATE "${schema}".outbox SET available_at = now(), due_at = now() WHERE id = $1`, [delayed]);
    await waitFor(() => ids(v2).has(delayed), { what: 'the delayed row once due' });
  }, 90_000);
});
