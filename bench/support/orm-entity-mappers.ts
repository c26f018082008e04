import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { EntitySchema as MikroEntitySchema, MikroORM } from '@mikro-orm/core';
import { PostgreSqlDriver } from '@mikro-orm/postgresql';
import { PrismaPg } from '@prisma/adapter-pg';
import { DataTypes, Sequelize } from 'sequelize';
import { DataSource, EntitySchema as TypeOrmEntitySchema } from 'typeorm';
import { fromMikroOrm } from '../../src/adapters/mikro-orm/index.js';
import { fromPrisma, type PrismaTransactionClient } from '../../src/adapters/prisma/index.js';
import { fromSequelize } from '../../src/adapters/sequelize/index.js';
import { fromTypeOrm } from '../../src/adapters/typeorm/index.js';
import { ensurePrismaClient, prismaClientDirectories } from '../../test/support/prisma/prisma-clients.js';
import { ORDER_NOTE, type OrmPath, type OrmRig, throughOutboxOf } from './orm-path.js';

// The ORMs of scenario (j) that map entities, each on one connection over the rig's schema, as an application sets them up.

interface Order {
  id: number;
  note: string;
}

/** The interactive transaction client of the tests' generated Prisma schema (`Order (id, note)` on `orders`). */
interface ShopTransaction extends PrismaTransactionClient {
  readonly order: { create(args: { data: Order }): PromiseLike<unknown> };
}

interface ShopClient {
  $transaction<R>(work: (tx: ShopTransaction) => Promise<R>): Promise<R>;
  $disconnect(): Promise<void>;
}

/** A loaded machine must not roll a transaction back under Prisma's 5 s default; these ones take a millisecond. */
const prismaTransactionOptions = { maxWait: 30_000, timeout: 30_000 };

/**
 * Prisma 7 with its node-postgres driver adapter, on the client the adapter tests generate (test/support/prisma:
 * generated once per schema and Prisma version, then reused).
 */
export async function prismaPath(rig: OrmRig): Promise<OrmPath> {
  const directory = prismaClientDirectories.test('postgresql');
  await ensurePrismaClient('postgresql', directory);
  const { PrismaClient } = (await import(pathToFileURL(join(directory, 'client.ts')).href)) as {
    PrismaClient: new (options: { adapter: PrismaPg; transactionOptions: typeof prismaTransactionOptions }) => ShopClient;
  };
  const adapter = new PrismaPg({ connectionString: rig.url, max: 1, application_name: rig.applicationName('prisma') }, { schema: rig.schema });
  const prisma = new PrismaClient({ adapter, transactionOptions: prismaTransactionOptions });
  const transaction: OrmPath['transaction'] = (work) =>
    prisma.$transaction((tx) =>
      work({
        insertOrder: async (id) => void (await tx.order.create({ data: { id, note: ORDER_NOTE } })),
        handle: () => fromPrisma(tx),
      }),
    );
  return { name: 'Prisma', transaction, throughOutbox: throughOutboxOf(transaction), close: () => prisma.$disconnect() };
}

const typeOrmOrder = new TypeOrmEntitySchema<Order>({
  name: 'Order',
  tableName: 'orders',
  columns: { id: { type: Number, primary: true }, note: { type: String } },
});

export async function typeOrmPath(rig: OrmRig): Promise<OrmPath> {
  const dataSource = await new DataSource({
    type: 'postgres',
    url: rig.url,
    schema: rig.schema,
    applicationName: rig.applicationName('typeorm'),
    extra: { max: 1 },
    entities: [typeOrmOrder],
  }).initialize();
  const transaction: OrmPath['transaction'] = (work) =>
    dataSource.transaction((manager) =>
      work({
        insertOrder: async (id) => void (await manager.insert(typeOrmOrder, { id, note: ORDER_NOTE })),
        handle: () => fromTypeOrm(manager),
      }),
    );
  return { name: 'TypeORM', transaction, throughOutbox: throughOutboxOf(transaction), close: () => dataSource.destroy() };
}

const mikroOrmOrder = new MikroEntitySchema<Order>({
  name: 'Order',
  tableName: 'orders',
  properties: { id: { type: 'integer', primary: true, autoincrement: false }, note: { type: 'string' } },
});

export async function mikroOrmPath(rig: OrmRig): Promise<OrmPath> {
  const orm = await MikroORM.init({
    driver: PostgreSqlDriver,
    clientUrl: rig.url,
    schema: rig.schema,
    entities: [mikroOrmOrder],
    pool: { min: 0, max: 1 },
    driverOptions: { connection: { application_name: rig.applicationName('mikro-orm') } },
    allowGlobalContext: false,
    debug: false,
  });
  const transaction: OrmPath['transaction'] = (work) =>
    orm.em.transactional((em) =>
      work({
        async insertOrder(id) {
          em.create(mikroOrmOrder, { id, note: ORDER_NOTE });
          await em.flush();
        },
        handle: () => fromMikroOrm(em),
      }),
    );
  return { name: 'MikroORM', transaction, throughOutbox: throughOutboxOf(transaction), close: () => orm.close(true) };
}

export async function sequelizePath(rig: OrmRig): Promise<OrmPath> {
  const sequelize = new Sequelize(rig.url, {
    logging: false,
    pool: { min: 0, max: 1 },
    dialectOptions: { application_name: rig.applicationName('sequelize') },
  });
  const orders = sequelize.define(
    'Order',
    { id: { type: DataTypes.INTEGER, primaryKey: true }, note: { type: DataTypes.TEXT, allowNull: false } },
    { tableName: 'orders', schema: rig.schema, timestamps: false },
  );
  const transaction: OrmPath['transaction'] = (work) =>
    sequelize.transaction((t) =>
      work({
        insertOrder: async (id) => void (await orders.create({ id, note: ORDER_NOTE }, { transaction: t })),
        handle: () => fromSequelize(t),
      }),
    );
  return { name: 'Sequelize', transaction, throughOutbox: throughOutboxOf(transaction), close: () => sequelize.close() };
}
