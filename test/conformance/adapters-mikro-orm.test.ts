import type { EntityManager } from '@mikro-orm/core';
import { afterEach, describe, expect, it } from 'vitest';
import { fromMikroOrm } from '../../src/adapters/mikro-orm/index.js';
import { Outbox, type StoreForOutbox } from '../../src/core/outbox.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import { describeAdapterConformance } from './adapter-conformance.js';
import { expectVouchedOnlyWhereOpen, floatingEnqueueCases, microtaskTurns, type FloatingEnqueueRig } from './floating-enqueue.js';
import { DATABASES, mikroOrmHarnesses, Rollback, type MikroOrmDatabase } from './mikro-orm-adapter-rigs.js';

for (const harness of mikroOrmHarnesses) describeAdapterConformance(harness);

describe.each(DATABASES)('fromMikroOrm on %s: an enqueue not awaited, then the transaction rolls back', (_name, open) => {
  let database: MikroOrmDatabase | undefined;
  afterEach(async () => {
    await database?.cleanup();
    database = undefined;
  });
  const floatingRig = async (rollBack: (em: EntityManager) => Promise<void>): Promise<FloatingEnqueueRig> => {
    const { orm, store, controls } = (database = await open());
    return {
      outbox: new Outbox(store as unknown as StoreForOutbox<OutboxTransaction>),
      rowCount: () => controls.rowCount(),
      rollBackAfter: (turns, enqueue) =>
        orm.em
          .transactional(async (em) => {
            enqueue(fromMikroOrm(em));
            await microtaskTurns(turns);
            await rollBack(em);
          })
          .then(
            () => expect.fail('the transaction was to roll back'),
            () => undefined,
          ),
      commit: (work) => orm.em.transactional((em) => work(fromMikroOrm(em))),
    };
  };
  const throwFromCallback = () => Promise.reject(new Rollback('roll back'));
  // MikroORM (and the Knex transaction under it) still count the transaction open: only the driver knows it ended
  const rawRollback = async (em: EntityManager) => {
    await em.getConnection().execute('ROLLBACK', [], 'run', em.getTransactionContext());
    throw new Rollback('and let MikroORM end it too');
  };

  it('runs a statement sent as vouched only where status() says open, confirming it as it sends', async () => {
    await expectVouchedOnlyWhereOpen(await floatingRig(throwFromCallback));
  });

  floatingEnqueueCases(floatingRig, {
    thrown: throwFromCallback,
    rawRollback: rawRollback,
    rawRollbackIs: "a ROLLBACK on the transaction's connection ends the transaction behind MikroORM",
  });
});
