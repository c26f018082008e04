import { sql, type Transaction } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { fromKysely } from '../../src/adapters/kysely/index.js';
import { Outbox, type StoreForOutbox } from '../../src/core/outbox.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import { describeAdapterConformance } from './adapter-conformance.js';
import { expectVouchedOnlyWhereOpen, floatingEnqueueCases, microtaskTurns, type FloatingEnqueueRig } from './floating-enqueue.js';
import { kyselyBackends, kyselyHarness, type KyselyBackend, type Shop } from './kysely-adapter-rigs.js';

for (const database of ['postgres', 'mariadb', 'sqlite'] as const) {
  describeAdapterConformance(kyselyHarness(database, 'execute'));
  describeAdapterConformance(kyselyHarness(database, 'controlled'));
}

class Rollback extends Error {}

describe.each(['postgres', 'mariadb', 'sqlite'] as const)('fromKysely on %s: an enqueue not awaited, then the transaction rolls back', (database) => {
  let backend: KyselyBackend | undefined;
  afterEach(async () => {
    await backend?.cleanup();
    backend = undefined;
  });
  const floatingRig = async (rollBack: (trx: Transaction<Shop>) => Promise<void>): Promise<FloatingEnqueueRig> => {
    const { db, store, controls } = (backend = await kyselyBackends[database]());
    return {
      outbox: new Outbox(store as unknown as StoreForOutbox<OutboxTransaction>),
      rowCount: () => controls.rowCount(),
      rollBackAfter: (turns, enqueue) =>
        db
          .transaction()
          .execute(async (trx) => {
            enqueue(fromKysely(trx));
            await microtaskTurns(turns);
            await rollBack(trx);
          })
          .then(
            () => expect.fail('the transaction was to roll back'),
            () => undefined,
          ),
      commit: (work) => db.transaction().execute((trx) => work(fromKysely(trx))),
    };
  };
  const throwFromCallback = () => Promise.reject(new Rollback('roll back'));
  // Kysely still counts the transaction open: only the driver knows it ended
  const rawRollback = async (trx: Transaction<Shop>) => {
    await sql`rollback`.execute(trx);
    throw new Rollback('and let Kysely end it too');
  };

  it('runs a statement sent as vouched only where status() says open, confirming it as it sends', async () => {
    await expectVouchedOnlyWhereOpen(await floatingRig(throwFromCallback));
  });

  floatingEnqueueCases(floatingRig, {
    thrown: throwFromCallback,
    rawRollback: rawRollback,
    rawRollbackIs: 'a raw ROLLBACK ends the transaction behind Kysely',
  });
});
