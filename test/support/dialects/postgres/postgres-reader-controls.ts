import type { NewOutboxMessage } from '../../../../src/core/message.js';
import type { PgDatabase } from '../../../../src/stores/postgres/database.js';
import type { PostgresOutboxStore } from '../../../../src/stores/postgres/postgres-store.js';
import type { HeldLock, OpenTransaction, ReaderControls } from '../../../conformance/reader-harness.js';

type Sql = (text: string, params?: unknown[]) => Promise<readonly Record<string, unknown>[]>;

/** Runs `work` in a transaction that stays open until the returned `finish` is called (commit or roll back). */
async function holdOpen(database: PgDatabase, work: (tx: Parameters<Parameters<PgDatabase['transaction']>[0]>[0]) => Promise<number>) {
  let started!: (pid: number) => void;
  let failed!: (error: unknown) => void;
  let finish!: (commit: boolean) => void;
  const pid = new Promise<number>((resolve, reject) => ((started = resolve), (failed = reject)));
  const ending = new Promise<boolean>((resolve) => (finish = resolve));
  const rollback = new Error('rolled back on purpose');
  const done = database
    .transaction(async (tx) => {
      started(await work(tx));
      if (!(await ending)) throw rollback;
    })
    .catch((error: unknown) => {
      failed(error);
      if (error !== rollback) throw error;
    });
  return { pid: await pid, finish, done };
}

/**
 * The reader conformance controls for the PostgreSQL store (pg and PGlite): plain SQL on the outbox. Given a
 * `database` that runs sessions side by side (a pool, not PGlite's one session), they include the open
 * transaction and the held row lock.
 */
export function postgresReaderControls(sql: Sql, schema: string, options: { database?: PgDatabase; store?: PostgresOutboxStore } = {}): ReaderControls {
  const outbox = `"${schema}"."outbox"`;
  const { database, store } = options;
  const openEnqueue = async (messages: readonly NewOutboxMessage[]): Promise<OpenTransaction> => {
    if (database === undefined || store === undefined) throw new Error('openEnqueue needs a database that runs sessions side by side');
    const open = await holdOpen(database, async (tx) => {
      await store.insert(tx, messages);
      return 0;
    });
    return {
      async end({ commit }) {
        open.finish(commit);
        await open.done;
      },
    };
  };
  const lockMessage = async (id: string): Promise<HeldLock> => {
    if (database === undefined) throw new Error('lockMessage needs a database that runs sessions side by side');
    const open = await holdOpen(database, async (tx) => {
      const me = await tx.query(`SELECT pg_backend_pid() AS pid FROM ${outbox} WHERE id = $1 FOR UPDATE`, [id]);
      return Number((me.rows[0] as { pid: number }).pid);
    });
    return {
      async waiting() {
        const rows = await sql(
          `WITH RECURSIVE blocked(pid) AS (
            SELECT pid FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))
            UNION SELECT a.pid FROM pg_stat_activity a, blocked b WHERE b.pid = ANY(pg_blocking_pids(a.pid)))
          SELECT count(*)::int AS n FROM blocked`,
          [open.pid],
        );
        return Number(rows[0]?.n);
      },
      async end() {
        open.finish(true);
        await open.done;
      },
    };
  };
  return {
    ...(database === undefined ? {} : { openEnqueue, lockMessage }),
    async insertPlain(rows) {
      for (const row of rows) {
        await sql(
          `INSERT INTO ${outbox} (topic, type, payload, key, due_at)
          VALUES ($1, $2, $3, $4, CASE WHEN $5::float8 IS NOT NULL THEN now() + $5::float8 * interval '1 second' END)`,
          [row.topic, row.type, row.payload, row.key ?? null, row.dueInSeconds ?? null],
        );
      }
    },
    async rowVersions() {
      const rows = await sql(`SELECT count(*)::int AS n, string_agg(seq || ':' || xmin || ':' || xmax || ':' || ctid, ',' ORDER BY seq) AS v FROM ${outbox}`);
      return `${String(rows[0]?.n)} ${String(rows[0]?.v)}`;
    },
    async makeDueNow() {
      await sql(`UPDATE ${outbox} SET due_at = now() - interval '1 second' WHERE state = 'pending' AND due_at IS NOT NULL`);
    },
  };
}
