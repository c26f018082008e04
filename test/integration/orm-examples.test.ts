import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, startScript } from '../support/cli-runner.js';
import { freshDatabase, type FreshDatabase } from '../support/fresh-services.js';
import { ensurePrismaClient, prismaClientDirectories } from '../support/prisma/prisma-clients.js';

/**
 * The snippets of docs/orms/<orm>.md (examples/orms/<orm>.ts), each run as a user runs it on a PostgreSQL database of
 * its own; Prisma's with the client `prisma generate` made from the doc's schema (offline: no engine is downloaded).
 */
describe.each([
  ['Kysely', 'kysely'],
  ['Drizzle', 'drizzle'],
  ['MikroORM', 'mikro-orm'],
  ['Prisma', 'prisma'],
])('the %s example', (orm, file) => {
  let database: FreshDatabase | undefined;
  beforeAll(async () => {
    if (file === 'prisma') await ensurePrismaClient('postgresql', prismaClientDirectories.example);
  }, 180_000);
  afterEach(async () => {
    await database?.drop();
    database = undefined;
  });

  it(`commits ${orm}'s order row and the outbox message in one transaction; a second run, whose order exists, leaves no second message`, async () => {
    database = await freshDatabase();
    const run = await startScript(`examples/orms/${file}.ts`, [], cliEnv({ DATABASE_URL: database.url })).waitForExit(75_000);
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

    // order 42 exists now: the second run's transaction fails on it (MikroORM: at its flush, after the enqueue) and
    // leaves no second message
    const again = await startScript(`examples/orms/${file}.ts`, [], cliEnv({ DATABASE_URL: database.url })).waitForExit(75_000);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/duplicate key|UniqueConstraint|Unique constraint/i);
    expect(Number((await database.pool.query('SELECT count(*) AS n FROM outbox')).rows[0].n)).toBe(1);
    expect(Number((await database.pool.query('SELECT count(*) AS n FROM orders')).rows[0].n)).toBe(1);
  }, 180_000);
});
