import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, startScript } from '../support/cli-runner.js';
import { freshDatabase, type FreshDatabase } from '../support/fresh-services.js';

/** examples/orms/drizzle.ts, the snippet of docs/orms/drizzle.md, run as a user runs it on a PostgreSQL database of its own. */
describe('the Drizzle example', () => {
  let database: FreshDatabase | undefined;
  afterEach(async () => {
    await database?.drop();
    database = undefined;
  });

  it("commits Drizzle's order row and the outbox message in one transaction", async () => {
    database = await freshDatabase();
    const run = await startScript('examples/orms/drizzle.ts', [], cliEnv({ DATABASE_URL: database.url })).waitForExit(75_000);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const { id } = JSON.parse(run.stdout) as { id: string };

    // xmin is the id of the transaction that wrote a row: one value for both rows means one commit
    const order = await database.pool.query<{ note: string; xmin: string }>('SELECT note, xmin::text AS xmin FROM orders WHERE id = 42');
    const message = await database.pool.query<{ topic: string; key: string; payload: unknown; xmin: string }>(
      "SELECT topic, key, payload, xmin::text AS xmin FROM outbox WHERE id = $1 AND state = 'pending'",
      [id],
    );
    expect(order.rows).toEqual([{ note: 'two lamps', xmin: expect.any(String) }]);
    expect(message.rows).toEqual([{ topic: 'orders.placed', key: 'order-42', payload: { orderId: 42, note: 'two lamps' }, xmin: order.rows[0]?.xmin }]);
    expect(Number((await database.pool.query('SELECT count(*) AS n FROM outbox')).rows[0].n)).toBe(1);
  }, 90_000);
});
