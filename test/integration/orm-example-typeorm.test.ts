import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, startScript } from '../support/cli-runner.js';
import { freshDatabase } from '../support/fresh-services.js';

/** examples/orms/typeorm.ts is the code of docs/orms/typeorm.md (test/unit/doc-snippets.test.ts): here it runs as a user runs it. */
describe('docs/orms/typeorm.md example', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("commits TypeORM's order row and the outbox message together on PostgreSQL, and the program ends", async () => {
    const db = await freshDatabase();
    cleanups.push(() => db.drop());
    const first = await startScript('examples/orms/typeorm.ts', [], cliEnv({ DATABASE_URL: db.url })).waitForExit(60_000);
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: '' });
    const { id } = JSON.parse(first.stdout) as { id: string };
    expect((await db.pool.query('SELECT id, note FROM orders')).rows).toEqual([{ id: 42, note: 'two lamps' }]);
    const stored = await db.pool.query('SELECT id::text AS id, topic, key, payload FROM public.outbox');
    expect(stored.rows).toEqual([{ id, topic: 'orders.placed', key: 'order-42', payload: { orderId: 42, note: 'two lamps' } }]);
  });
});
