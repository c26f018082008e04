import { drizzle } from 'drizzle-orm/node-postgres';
import { integer, pgSchema, text } from 'drizzle-orm/pg-core';
import knex from 'knex';
import { Kysely, PostgresDialect } from 'kysely';
import { fromDrizzle } from '../../src/adapters/drizzle/index.js';
import { fromKnex } from '../../src/adapters/knex/index.js';
import { fromKysely } from '../../src/adapters/kysely/index.js';
import { benchPool } from './database.js';
import { ORDER_NOTE, type OrmPath, type OrmRig, throughOutboxOf } from './orm-path.js';

/** The query builders of scenario (j), each on a one-connection pool over the rig's schema, as an application sets them up. */

interface Shop {
  orders: { id: number; note: string };
}

export async function kyselyPath(rig: OrmRig): Promise<OrmPath> {
  const db = new Kysely<Shop>({ dialect: new PostgresDialect({ pool: benchPool(rig.applicationName('kysely'), 1) }) }).withSchema(rig.schema);
  const transaction: OrmPath['transaction'] = (work) =>
    db.transaction().execute((trx) =>
      work({
        insertOrder: async (id) => void (await trx.insertInto('orders').values({ id, note: ORDER_NOTE }).execute()),
        handle: () => fromKysely(trx),
      }),
    );
  return { name: 'Kysely', transaction, throughOutbox: throughOutboxOf(transaction), close: () => db.destroy() };
}

export async function knexPath(rig: OrmRig): Promise<OrmPath> {
  const db = knex({
    client: 'pg',
    connection: { connectionString: rig.url, application_name: rig.applicationName('knex') },
    searchPath: [rig.schema],
    pool: { min: 0, max: 1 },
  });
  const transaction: OrmPath['transaction'] = (work) =>
    db.transaction((trx) =>
      work({
        insertOrder: async (id) => void (await trx('orders').insert({ id, note: ORDER_NOTE })),
        handle: () => fromKnex(trx),
      }),
    );
  return { name: 'Knex', transaction, throughOutbox: throughOutboxOf(transaction), close: () => db.destroy() };
}

export async function drizzlePath(rig: OrmRig): Promise<OrmPath> {
  const pool = benchPool(rig.applicationName('drizzle'), 1);
  const db = drizzle({ client: pool });
  const orders = pgSchema(rig.schema).table('orders', { id: integer('id').primaryKey(), note: text('note').notNull() });
  const transaction: OrmPath['transaction'] = (work) =>
    db.transaction((tx) =>
      work({
        insertOrder: async (id) => void (await tx.insert(orders).values({ id, note: ORDER_NOTE })),
        handle: () => fromDrizzle(tx),
      }),
    );
  return { name: 'Drizzle', transaction, throughOutbox: throughOutboxOf(transaction), close: () => pool.end() };
}
