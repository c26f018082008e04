import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { fromKysely } from '../../src/adapters/kysely/index.js';
import { Inbox } from '../../src/consumer/inbox.js';
import { PostgresInboxStore } from '../../src/stores/postgres/inbox/postgres-inbox-store.js';
import { withOrmTransactions } from '../../src/consumer/with-orm-transactions.js';
import { ConfigurationError } from '../../src/core/errors.js';
import type { OutboxTransaction, SqlDialect, TransactionStatus } from '../../src/core/ports/outbox-transaction.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { entryRef, handmade, rigs, type Rig, type Shop } from '../support/consumer-orm-rigs.js';
import { services } from '../support/services.js';
import { message } from '../conformance/inbox-conformance.js';

describe.each(rigs)('the claim through a hand-made handle of the port on $name', ({ open }) => {
  let rig: Rig | undefined;
  afterEach(async () => {
    await rig?.cleanup();
    rig = undefined;
  });

  it('is refused in the database, with nothing written, and the handler does not run', async () => {
    rig = await open();
    const r = rig;
    const { table, param: p } = r.sqlDialect;
    const m = message({ type: 'invoice.paid', topic: 'invoices' });
    const stored = async () => r.sql(`SELECT state, attempts FROM ${table('outbox_inbox')} WHERE message_id = ${p(1)}`, [m.id]);
    await expect(r.store.claim(r.autocommitHandle(), entryRef(m.id))).rejects.toMatchObject({
      code: 'OUTBOXER_NOT_IN_TRANSACTION',
      message: expect.stringMatching(
        new RegExp(
          `^inbox billing: the claim of message ${m.id} was refused, so nothing was claimed and no handler ran\\. .*withOrmTransactions.* The store said: .*a hand-made handle outside any transaction`,
        ),
      ),
    });
    expect(await stored()).toEqual([]);

    // an ORM "transaction" that is not one: the attempt is counted outside it, the handler never ran
    let runs = 0;
    const notATransaction = withOrmTransactions<OutboxTransaction>(r.store, { transaction: (work) => work(r.autocommitHandle()), adapt: (tx) => tx });
    const outcome = await new Inbox(notATransaction, { consumer: 'billing' }).handle(m, async () => {
      runs++;
    });
    expect(outcome).toMatchObject({ status: 'retry', attempts: 1, error: expect.stringMatching(/^OUTBOXER_NOT_IN_TRANSACTION: inbox billing: /) });
    expect(runs).toBe(0);
    expect(await stored()).toEqual([{ state: 'failed', attempts: 1 }]);
  });

  it('is refused without a statement for a handle that says its transaction ended or failed, or that is on another database', async () => {
    rig = await open();
    const statements: string[] = [];
    const counted = (dialect: SqlDialect, status: () => TransactionStatus | undefined) =>
      handmade(
        dialect,
        async (sql) => {
          statements.push(sql);
          return { rows: [], affectedRows: 0 };
        },
        status,
      );
    const entry = entryRef(message().id);
    await expect(
      rig.store.claim(
        counted(rig.dialect, () => 'closed'),
        entry,
      ),
    ).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION', message: expect.stringContaining('not inside an open transaction') });
    await expect(
      rig.store.claim(
        counted(rig.dialect, () => 'failed'),
        entry,
      ),
    ).rejects.toMatchObject({ code: 'OUTBOXER_NOT_IN_TRANSACTION', message: expect.stringContaining('waits for its ROLLBACK') });
    const other: SqlDialect = rig.dialect === 'sqlite' ? 'postgres' : 'sqlite';
    const wrong = rig.store.claim(
      counted(other, () => 'open'),
      entry,
    );
    await expect(wrong).rejects.toBeInstanceOf(ConfigurationError);
    await expect(wrong).rejects.toMatchObject({ code: 'OUTBOXER_WRONG_DIALECT', message: expect.stringMatching(/^inbox billing: the claim of message/) });
    expect(statements).toEqual([]);
  });

  it("takes a handle its driver vouches for (the stores' own raw-driver handles) without a probe", async () => {
    rig = await open();
    const r = rig;
    const m = message({ type: 'invoice.paid', topic: 'invoices' });
    const statements: string[] = [];
    const vouched = (tx: OutboxTransaction) =>
      handmade(
        r.dialect,
        (sql, params) => {
          statements.push(sql.trimStart().split(/\s/)[0] ?? '');
          return tx.query(sql, params);
        },
        () => 'open',
      );
    await r.inDriverTransaction((tx) => r.store.claim(vouched(tx), entryRef(m.id)));
    expect(await r.sql(`SELECT state, attempts FROM ${r.sqlDialect.table('outbox_inbox')} WHERE message_id = ${r.sqlDialect.param(1)}`, [m.id])).toEqual([
      { state: 'processed', attempts: 1 },
    ]);
    // the claim's own statements only: no set_config probe, @@in_transaction read or BEGIN
    const expected: Record<SqlDialect, string[]> = { postgres: ['INSERT'], mysql: ['INSERT', 'SELECT', 'UPDATE'], sqlite: ['INSERT', 'SELECT', 'UPDATE'] };
    expect(statements).toEqual(expected[r.dialect]);
  });
});

describe('withOrmTransactions options', () => {
  // never connected: everything here is refused before a statement
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 1 });
  afterAll(() => pool.end());
  const store = new PostgresInboxStore(fromPgPool(pool));
  const adapt = (tx: OutboxTransaction) => tx;
  const transaction = (work: (tx: OutboxTransaction) => Promise<unknown>) => work(handmade('postgres', async () => ({ rows: [], affectedRows: 0 })));

  it('refuses what is not a function, an unknown option, and a store that is not an inbox store', () => {
    const refused = (run: () => unknown, option: string | undefined, words: RegExp) => {
      let caught: unknown;
      try {
        run();
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ConfigurationError);
      expect(caught).toMatchObject({ code: 'OUTBOXER_INVALID_OPTION', message: expect.stringMatching(words), options: option === undefined ? [] : [option] });
    };
    refused(
      () => withOrmTransactions<OutboxTransaction>(store, { transaction: 'db.transaction' as never, adapt }),
      'transaction',
      /option transaction: must be a function .* got string/,
    );
    refused(() => withOrmTransactions(store, { transaction } as never), 'adapt', /option adapt: must be the ORM's adapter .* got undefined/);
    refused(
      () => withOrmTransactions(store, { transaction, adapt, retries: 3 } as never),
      'retries',
      /^withOrmTransactions option retries: is not an option \(known: transaction, adapt\)$/,
    );
    refused(() => withOrmTransactions(store, null as never), undefined, /^withOrmTransactions option \(root\): must be \{ transaction, adapt \}, got null$/);
    refused(
      () => withOrmTransactions({ claim: () => undefined } as never, { transaction, adapt }),
      undefined,
      /must be an inbox store .* has no recordFailure, purgeProcessed/,
    );
  });

  it('refuses an adapter that returns a raw driver handle, and an ORM transaction that never ran the work', async () => {
    let rawQueries = 0;
    const raw = { query: async () => ((rawQueries += 1), { rows: [], rowCount: 0 }) };
    const wrapped = withOrmTransactions<typeof raw>(store, { transaction: (work) => work(raw), adapt: (tx) => tx as never });
    await expect(wrapped.claim(raw, entryRef(message().id))).rejects.toMatchObject({
      code: 'OUTBOXER_NOT_IN_TRANSACTION',
      message: expect.stringMatching(/^withOrmTransactions: option adapt returned an object \(Object\), not a transaction of the port/),
    });
    expect(rawQueries).toBe(0);
    const idle = withOrmTransactions<OutboxTransaction>(store, { transaction: async () => undefined, adapt });
    await expect(idle.transaction(async () => 'never')).rejects.toMatchObject({
      code: 'OUTBOXER_INVALID_OPTION',
      message: expect.stringContaining('resolved before the work it was given had run'),
    });
  });

  it("needs the ORM's transaction type: inferred from the adapter it would be the adapter's view, not the ORM's", () => {
    const db = new Kysely<Shop>({ dialect: new PostgresDialect({ pool }) });
    const typed = withOrmTransactions<Transaction<Shop>>(store, { transaction: (work) => db.transaction().execute(work), adapt: fromKysely });
    const untyped = withOrmTransactions(store, {
      transaction: (work) => db.transaction().execute(work),
      // @ts-expect-error OrmTx is not inferred from the adapter: give it, withOrmTransactions<Transaction<DB>>(...)
      adapt: fromKysely,
    });
    expect([typeof typed.claim, typeof untyped.claim]).toEqual(['function', 'function']);
  });
});
