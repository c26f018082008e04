import { describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { resizePartitions } from '../../src/stores/postgres/engine/resize-partitions.js';
import { resolveTableName } from '../../src/stores/postgres/sql.js';
import { checkDeliveries } from '../support/order-checker.js';
import { holdings, v2RelayScope, v2Timing } from '../support/partition-relay-fixture.js';
import { RecordingPublisher } from '../support/recording-publisher.js';
import { waitFor } from '../support/wait-for.js';

describe('engine v2 relays during a resize', () => {
  const { relays, open } = v2RelayScope();

  it('give back every partition while the resize waits, acquire again under the new count, and publish everything in key order', async () => {
    const f = await open();
    const outbox = new Outbox<SqlExecutor>(f.store);
    const db = fromPgPool(f.pool);
    const publisher = new RecordingPublisher();
    for (let i = 0; i < 2; i++) {
      const relay = outbox.createRelay(publisher, v2Timing);
      relays.push(relay);
      relay.start();
    }
    await waitFor(async () => [...(await holdings(f)).values()].reduce((a, b) => a + b, 0) === 64, { what: 'both relays to hold all 64 partitions' });
    const expected: { id: string; key: string | null }[] = [];
    const write = async (round: number) => {
      const batch = Array.from({ length: 20 }, (_, i) => ({ topic: 't', type: 'x', key: `k${i % 7}`, payload: { round, i } }));
      const ids = await outbox.transaction(db, (tx) => outbox.enqueueMany(tx, batch));
      ids.forEach((id, i) => expected.push({ id, key: batch[i]?.key ?? null }));
    };
    await write(0);
    const steps: string[] = [];
    const resizing = resizePartitions(fromPgPool(f.pool), resolveTableName(f.schema, 'outbox'), {
      partitions: 8,
      pollMs: 50,
      waitTimeoutMs: 30_000,
      onProgress: (p) => steps.push(p.step),
    });
    for (let round = 1; round <= 5; round++) await write(round);
    const result = await resizing;
    expect(result).toMatchObject({ from: 64, to: 8, changed: true });
    expect(steps).toContain('switched');
    await write(6);
    await waitFor(() => publisher.delivered.length >= expected.length, { timeoutMs: 30_000, what: 'every message after the resize' });
    await waitFor(async () => [...(await holdings(f)).values()].reduce((a, b) => a + b, 0) === 8, { what: 'the relays to hold the 8 new partitions' });
    expect(
      checkDeliveries(
        expected,
        publisher.delivered.map((m) => m.id),
      ),
    ).toEqual({ lost: [], phantom: [], duplicates: 0, orderInversions: 0 });
  });
});
