import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, startScript } from '../support/cli-runner.js';
import { freshDatabase, type FreshDatabase } from '../support/fresh-services.js';

/** examples/orms/mikro-orm.ts, the snippet of docs/orms/mikro-orm.md, run as a user runs it on a PostgreSQL database of its own. */
describe('the MikroORM example', () => {
  let database: FreshDatabase | undefined;
  afterEach(async () => {
    await database?.drop();
    database = undefined;
  });

  it("commits MikroORM's flushed order and the outbox message in one transaction; a second run, whose flush fails, leaves no second message", async () => {
    database = await freshDatabase();
    const run = await startScript('examples/orms/mikro-orm.ts', [], cliEnv({ DATABASE_URL: database.url })).waitForExit(30_000);
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

    // order 42 exists: MikroORM's flush before the COMMIT fails, after the enqueue, and takes the message with it
    const again = await startScript('examples/orms/mikro-orm.ts', [], cliEnv({ DATABASE_URL: database.url })).waitForExit(30_000);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/UniqueConstraintViolationException|duplicate key/);
    expect(Number((await database.pool.query('SELECT count(*) AS n FROM outbox')).rows[0].n)).toBe(1);
    expect(Number((await database.pool.query('SELECT count(*) AS n FROM orders')).rows[0].n)).toBe(1);
  });
});
