import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, startScript } from '../support/cli-runner.js';
import { freshDatabase } from '../support/fresh-services.js';

/** examples/orms/sequelize.ts is the code of docs/orms/sequelize.md (test/unit/doc-snippets.test.ts): here it runs as a user runs it. */
describe('docs/orms/sequelize.md example', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("commits Sequelize's order row and the outbox message together on PostgreSQL, and rolls both back when the order fails", async () => {
    const db = await freshDatabase();
    cleanups.push(() => db.drop());
    const first = await startScript('examples/orms/sequelize.ts', [], cliEnv({ DATABASE_URL: db.url })).waitForExit(60_000);
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: '' });
    const { id } = JSON.parse(first.stdout) as { id: string };
    expect((await db.pool.query('SELECT id, note FROM orders')).rows).toEqual([{ id: 42, note: 'two lamps' }]);
    const stored = () => db.pool.query('SELECT id::text AS id, topic, key, payload FROM public.outbox');
    expect((await stored()).rows).toEqual([{ id, topic: 'orders.placed', key: 'order-42', payload: { orderId: 42 } }]);

    // order 42 exists now: the second run's INSERT fails, and Sequelize rolls back the message enqueued with it
    const second = await startScript('examples/orms/sequelize.ts', [], cliEnv({ DATABASE_URL: db.url })).waitForExit(60_000);
    expect(second.code).not.toBe(0);
    expect(second.stderr).toMatch(/SequelizeUniqueConstraintError/);
    expect((await stored()).rows).toEqual([{ id, topic: 'orders.placed', key: 'order-42', payload: { orderId: 42 } }]);
  });
});
