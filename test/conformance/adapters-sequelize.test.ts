import type { Sequelize, Transaction } from 'sequelize';
import { afterEach, describe, expect, it } from 'vitest';
import { fromSequelize } from '../../src/adapters/sequelize/index.js';
import { Outbox, type StoreForOutbox } from '../../src/core/outbox.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import { describeAdapterConformance } from './adapter-conformance.js';
import { expectVouchedOnlyWhereOpen, floatingEnqueueCases, microtaskTurns, type FloatingEnqueueRig } from './floating-enqueue.js';
import { sequelizeDatabases, sequelizeHarnesses, type SequelizeDatabase } from './sequelize-adapter-rigs.js';

for (const harness of sequelizeHarnesses) describeAdapterConformance(harness);

class Rollback extends Error {}

for (const { name, open } of sequelizeDatabases) {
  describe(`fromSequelize on ${name}: an enqueue not awaited, then the transaction rolls back`, () => {
    let database: SequelizeDatabase | undefined;
    afterEach(async () => {
      await database?.sequelize.close();
      await database?.drop();
      database = undefined;
    });
    const floatingRig = async (rollBack: (sequelize: Sequelize, t: Transaction) => Promise<void>): Promise<FloatingEnqueueRig> => {
      const { sequelize, store, controls } = (database = await open());
      return {
        outbox: new Outbox(store as unknown as StoreForOutbox<OutboxTransaction>),
        rowCount: () => controls.rowCount(),
        rollBackAfter: (turns, enqueue) =>
          sequelize
            .transaction(async (t) => {
              enqueue(fromSequelize(t));
              await microtaskTurns(turns);
              await rollBack(sequelize, t);
            })
            .then(
              () => expect.fail('the transaction was to roll back'),
              () => undefined,
            ),
        commit: (work) => sequelize.transaction((t) => work(fromSequelize(t))),
      };
    };
    const throwFromCallback = () => Promise.reject(new Rollback('roll back'));
    // Sequelize still counts the transaction open: only the driver knows it ended
    const rawRollback = async (sequelize: Sequelize, t: Transaction) => {
      await sequelize.query('ROLLBACK', { transaction: t });
      throw new Rollback('and let Sequelize end it too');
    };

    it('runs a statement sent as vouched only where status() says open, confirming it as it sends', async () => {
      await expectVouchedOnlyWhereOpen(await floatingRig(throwFromCallback));
    });

    floatingEnqueueCases(floatingRig, {
      thrown: throwFromCallback,
      rawRollback: rawRollback,
      rawRollbackIs: 'a ROLLBACK through sequelize.query ends the transaction behind Sequelize',
    });
  });
}
