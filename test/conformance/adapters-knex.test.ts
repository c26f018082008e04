import type { Knex } from 'knex';
import { afterEach, describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/adapters/knex/index.js';
import { Outbox, type StoreForOutbox } from '../../src/core/outbox.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import { describeAdapterConformance } from './adapter-conformance.js';
import { expectVouchedOnlyWhereOpen, floatingEnqueueCases, microtaskTurns, type FloatingEnqueueRig } from './floating-enqueue.js';
import { knexDatabases, knexHarnesses, RolledBack, type KnexDatabase } from './knex-adapter-rigs.js';

for (const harness of knexHarnesses) describeAdapterConformance(harness);

for (const { name, open } of knexDatabases) {
  describe(`fromKnex on ${name}: an enqueue not awaited, then the transaction rolls back`, () => {
    let database: KnexDatabase | undefined;
    afterEach(async () => {
      await database?.db.destroy();
      await database?.drop();
      database = undefined;
    });
    const floatingRig = async (rollBack: (trx: Knex.Transaction) => Promise<void>): Promise<FloatingEnqueueRig> => {
      const { db, store, controls } = (database = await open());
      return {
        outbox: new Outbox(store as unknown as StoreForOutbox<OutboxTransaction>),
        rowCount: () => controls.rowCount(),
        rollBackAfter: (turns, enqueue) =>
          db
            .transaction(async (trx) => {
              enqueue(fromKnex(trx));
              await microtaskTurns(turns);
              await rollBack(trx);
            })
            .then(
              () => expect.fail('the transaction was to roll back'),
              () => undefined,
            ),
        commit: (work) => db.transaction((trx) => work(fromKnex(trx))),
      };
    };
    const throwFromCallback = () => Promise.reject(new RolledBack('roll back'));
    // Knex still counts the transaction open: only the driver knows it ended
    const rawRollback = async (trx: Knex.Transaction) => {
      await trx.raw('ROLLBACK');
      throw new RolledBack('and let Knex end it too');
    };

    it('runs a statement sent as vouched only where status() says open, confirming it as it sends', async () => {
      await expectVouchedOnlyWhereOpen(await floatingRig(throwFromCallback));
    });

    floatingEnqueueCases(floatingRig, {
      thrown: throwFromCallback,
      rawRollback: rawRollback,
      rawRollbackIs: 'a ROLLBACK through trx.raw ends the transaction behind Knex',
    });
  });
}
