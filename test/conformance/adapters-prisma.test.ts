import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fromPrisma } from '../../src/adapters/prisma/index.js';
import { Outbox, type StoreForOutbox } from '../../src/core/outbox.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import { ensureTestPrismaClients } from '../support/prisma/prisma-clients.js';
import { describeAdapterConformance } from './adapter-conformance.js';
import { expectVouchedOnlyWhereOpen, floatingEnqueueCases, microtaskTurns, type FloatingEnqueueRig } from './floating-enqueue.js';
import { prismaBackends, prismaHarness, type PrismaBackend, type ShopTransaction } from './prisma-adapter-rigs.js';

beforeAll(() => ensureTestPrismaClients(), 180_000);

for (const database of ['postgres', 'mariadb', 'sqlite'] as const) describeAdapterConformance(prismaHarness(database));

class Rollback extends Error {}

describe.each(['postgres', 'mariadb', 'sqlite'] as const)('fromPrisma on %s: an enqueue not awaited, then the transaction rolls back', (database) => {
  let backend: PrismaBackend | undefined;
  afterEach(async () => {
    await backend?.cleanup();
    backend = undefined;
  });
  const floatingRig = async (rollBack: (tx: ShopTransaction) => Promise<void>): Promise<FloatingEnqueueRig> => {
    const { prisma, store, controls } = (backend = await prismaBackends[database]());
    return {
      outbox: new Outbox(store as unknown as StoreForOutbox<OutboxTransaction>),
      rowCount: () => controls.rowCount(),
      rollBackAfter: (turns, enqueue) =>
        prisma
          .$transaction(async (tx) => {
            enqueue(fromPrisma(tx));
            await microtaskTurns(turns);
            await rollBack(tx);
          })
          .then(
            () => expect.fail('the transaction was to roll back'),
            () => undefined,
          ),
      commit: (work) => prisma.$transaction((tx) => work(fromPrisma(tx))),
    };
  };
  const throwFromCallback = () => Promise.reject(new Rollback('roll back'));
  // Prisma still counts the transaction open: only the driver knows it ended
  const rawRollback = async (tx: ShopTransaction) => {
    await tx.$executeRawUnsafe('ROLLBACK');
    throw new Rollback('and let Prisma end it too');
  };

  it('runs a statement sent as vouched only where status() says open, confirming it as it sends', async () => {
    await expectVouchedOnlyWhereOpen(await floatingRig(throwFromCallback));
  });

  floatingEnqueueCases(floatingRig, {
    thrown: throwFromCallback,
    rawRollback: rawRollback,
    rawRollbackIs: 'a raw ROLLBACK ends the transaction behind Prisma',
  });
});
