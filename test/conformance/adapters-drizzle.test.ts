import { sql } from 'drizzle-orm';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Outbox, type StoreForOutbox } from '../../src/core/outbox.js';
import type { OutboxTransaction } from '../../src/core/ports/outbox-transaction.js';
import { describeAdapterConformance } from './adapter-conformance.js';
import { expectVouchedOnlyWhereOpen, floatingEnqueueCases, microtaskTurns, type FloatingEnqueueRig } from './floating-enqueue.js';
import {
  closeSharedPglite,
  drizzleHarnesses,
  mariadbDatabase,
  pgliteDatabase,
  postgresDatabase,
  sqliteDatabase,
  type DrizzleDatabase,
} from './drizzle-adapter-rigs.js';

afterAll(closeSharedPglite);

for (const harness of drizzleHarnesses) describeAdapterConformance(harness);

class Rollback extends Error {}

/** The enqueue-not-awaited sweep on one Drizzle driver; `rawRollback` ends the transaction with SQL Drizzle does not see. */
function describeFloatingEnqueue<Tx>(name: string, open: () => Promise<DrizzleDatabase<Tx>>, rawRollback: (tx: Tx) => Promise<unknown>): void {
  describe(`fromDrizzle on ${name}: an enqueue not awaited, then the transaction rolls back`, () => {
    let database: DrizzleDatabase<Tx> | undefined;
    afterEach(async () => {
      await database?.close();
      database = undefined;
    });
    const floatingRig = async (rollBack: (tx: Tx) => Promise<void>): Promise<FloatingEnqueueRig> => {
      const current = (database = await open());
      return {
        outbox: new Outbox(current.store as unknown as StoreForOutbox<OutboxTransaction>),
        rowCount: () => current.controls.rowCount(),
        rollBackAfter: (turns, enqueue) =>
          current
            .begin(async (tx) => {
              enqueue(current.adapt(tx));
              await microtaskTurns(turns);
              await rollBack(tx);
            })
            .then(
              () => expect.fail('the transaction was to roll back'),
              () => undefined,
            ),
        commit: (work) => current.begin((tx) => work(current.adapt(tx))),
      };
    };
    const throwFromCallback = () => Promise.reject(new Rollback('roll back'));
    // Drizzle still counts the transaction open: only the driver knows it ended
    const behindDrizzle = async (tx: Tx) => {
      await rawRollback(tx);
      throw new Rollback('and let Drizzle end it too');
    };

    it('runs a statement sent as vouched only where status() says open, confirming it as it sends', async () => {
      await expectVouchedOnlyWhereOpen(await floatingRig(throwFromCallback));
    });

    floatingEnqueueCases(floatingRig, {
      thrown: throwFromCallback,
      rawRollback: behindDrizzle,
      rawRollbackIs: 'a raw ROLLBACK ends the transaction behind Drizzle',
    });
  });
}

describeFloatingEnqueue('node-postgres', postgresDatabase, (tx) => tx.execute(sql`rollback`));
describeFloatingEnqueue('PGlite', pgliteDatabase, (tx) => tx.execute(sql`rollback`));
describeFloatingEnqueue('mysql2 (MariaDB)', mariadbDatabase, (tx) => tx.execute(sql`rollback`));
describeFloatingEnqueue('better-sqlite3 (betterSqliteTransaction)', sqliteDatabase, async (tx) => tx.run(sql`rollback`));
