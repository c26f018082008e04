import type { MysqlDatabase, MysqlExecutor } from '../../../../src/stores/mysql/database.js';
import type { MysqlTableNames } from '../../../../src/stores/mysql/table-names.js';
import type { LeaseControls, RelayLock } from '../../../conformance/lease-harness.js';

/**
 * Holds a transaction open on a connection of its own: `work` runs in it and returns the connection id; the
 * transaction ends (commit, or roll back when `finish(false)`) once `finish` is called. `done` settles after it.
 */
export async function holdOpenMysql(
  database: MysqlDatabase,
  work: (tx: MysqlExecutor) => Promise<void>,
  atEnd: (tx: MysqlExecutor, commit: boolean) => Promise<void> = async () => undefined,
): Promise<{ connectionId: number; finish(commit: boolean): void; done: Promise<void> }> {
  let started!: (id: number) => void;
  let failed!: (error: unknown) => void;
  let finish!: (commit: boolean) => void;
  const connection = new Promise<number>((resolve, reject) => ((started = resolve), (failed = reject)));
  const ending = new Promise<boolean>((resolve) => (finish = resolve));
  const rollback = new Error('rolled back on purpose');
  const done = database
    .transaction(async (tx) => {
      const me = await tx.query('SELECT CONNECTION_ID() AS id');
      await work(tx);
      started(Number(me.rows[0]?.id));
      const commit = await ending;
      await atEnd(tx, commit);
      if (!commit) throw rollback;
    })
    .catch((error: unknown) => {
      failed(error);
      if (error !== rollback) throw error;
    });
  return { connectionId: await connection, finish, done };
}

/**
 * The sessions blocked, directly or through another blocked session, by the transaction of connection
 * `connectionId` (MariaDB's lock waits; the view is refreshed at most every 100 ms, so callers poll). A waiter is
 * found by the lock it requests: a read-only transaction shows trx id 0 there, so ids would not tell waiters apart.
 */
export async function blockedBy(database: MysqlExecutor, connectionId: number): Promise<number> {
  const { rows } = await spacedTrxRead(
    database,
    `SELECT r.trx_mysql_thread_id AS waiter, b.trx_mysql_thread_id AS holder
    FROM information_schema.INNODB_LOCK_WAITS w
    JOIN information_schema.INNODB_TRX r ON r.trx_requested_lock_id = w.requested_lock_id
    JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id`,
  );
  const blocked = new Set<number>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const row of rows) {
      const [waiter, holder] = [Number(row.waiter), Number(row.holder)];
      if ((holder === connectionId || blocked.has(holder)) && waiter !== connectionId && !blocked.has(waiter)) {
        blocked.add(waiter);
        grew = true;
      }
    }
  }
  return blocked.size;
}

let lastTrxRead = 0;

/**
 * Reads InnoDB's transaction views at most every 120 ms from this process. The server refreshes their shared
 * cache only once it has gone unread for 100 ms, and every read restarts that wait: a tighter poll (the suites
 * poll every 25 ms) would keep reading the snapshot of its first read forever.
 */
async function spacedTrxRead(database: MysqlExecutor, sql: string) {
  const wait = lastTrxRead + 120 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  try {
    return await database.query(sql);
  } finally {
    lastTrxRead = Date.now();
  }
}

/** The lease conformance controls for the MariaDB/MySQL store: plain SQL on the side tables, with `lockRelay`. */
export function mysqlLeaseControls(database: MysqlDatabase, names: MysqlTableNames): LeaseControls {
  const lockRelay = async (relayId: string): Promise<RelayLock> => {
    let reap = false;
    const open = await holdOpenMysql(
      database,
      async (tx) => {
        const locked = await tx.query(`SELECT relay_id FROM ${names.relays} WHERE relay_id = ? FOR UPDATE`, [relayId]);
        if (locked.rows.length !== 1) throw new Error(`no relay ${relayId} to lock`);
      },
      async (tx) => {
        if (!reap) return;
        await tx.query(`DELETE FROM ${names.relays} WHERE relay_id = ?`, [relayId]);
        await tx.query(`UPDATE ${names.partitions} SET owner = NULL, state = 'free', unclean = unclean + 1 WHERE owner = ?`, [relayId]);
      },
    );
    return {
      waiting: () => blockedBy(database, open.connectionId),
      async end(options) {
        reap = options.reap;
        open.finish(true);
        await open.done;
      },
    };
  };
  return {
    lockRelay,
    async expireRelay(relayId) {
      const expired = await database.query(`UPDATE ${names.relays} SET expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE relay_id = ?`, [relayId]);
      if (expired.affectedRows !== 1) throw new Error(`no relay ${relayId} to expire`);
    },
    async configure({ resizeTo }) {
      await database.query(`UPDATE ${names.partitioning} SET resize_to = ?`, [resizeTo ?? null]);
    },
  };
}
