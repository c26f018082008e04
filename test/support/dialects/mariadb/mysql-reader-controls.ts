import type { NewOutboxMessage } from '../../../../src/core/message.js';
import type { MysqlDatabase } from '../../../../src/stores/mysql/database.js';
import type { MysqlOutboxStore } from '../../../../src/stores/mysql/mysql-store.js';
import type { MysqlTableNames } from '../../../../src/stores/mysql/table-names.js';
import { blockedBy, holdOpenMysql } from './mysql-lease-controls.js';
import type { HeldLock, OpenTransaction, ReaderControls } from '../../../conformance/reader-harness.js';

/** Every column of a row, NULLs told apart from text (`QUOTE(NULL)` is the bare word NULL). */
const ROW_TEXT = `CONCAT_WS('|', seq, QUOTE(id), QUOTE(topic), QUOTE(type), QUOTE(\`key\`), QUOTE(payload), QUOTE(HEX(payload_bytes)),
  QUOTE(content_type), QUOTE(headers), state, QUOTE(created_at), QUOTE(due_at), attempts, QUOTE(last_error), QUOTE(published_at),
  QUOTE(dead_at), partition_no)`;

/**
 * The transactions of this database's sessions that hold row locks or uncommitted changes. InnoDB marks no lock in
 * the row (PostgreSQL's xmax): a lock taken and released leaves no trace, so what a fingerprint can see is a lock
 * or a change still held by an open transaction. InnoDB serves this list from a cache refreshed only after 100 ms
 * unread, so it is read inside a transaction of our own and trusted only once that transaction is in it.
 */
async function heldByOpenTransactions(database: MysqlDatabase): Promise<string> {
  for (let attempt = 0; attempt < 40; attempt++) {
    const seen = await database.session(async (session) => {
      await session.query('START TRANSACTION WITH CONSISTENT SNAPSHOT');
      try {
        const { rows } = await session.query(`SELECT t.trx_mysql_thread_id = CONNECTION_ID() AS mine, t.trx_mysql_thread_id AS thread,
            t.trx_rows_locked AS locked, t.trx_rows_modified AS modified
          FROM information_schema.INNODB_TRX t LEFT JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
          WHERE t.trx_mysql_thread_id = CONNECTION_ID() OR p.DB = DATABASE()`);
        if (!rows.some((row) => Number(row.mine) === 1)) return null;
        return rows
          .filter((row) => Number(row.mine) !== 1 && (Number(row.locked) > 0 || Number(row.modified) > 0))
          .map((row) => `${String(row.thread)}:${String(row.locked)}:${String(row.modified)}`)
          .sort()
          .join(',');
      } finally {
        await session.query('COMMIT');
      }
    });
    if (seen !== null) return seen;
    await new Promise((resolve) => setTimeout(resolve, 110));
  }
  throw new Error('information_schema.INNODB_TRX stayed stale for 4 s: something reads it more often than every 100 ms');
}

/** The reader conformance controls for the MariaDB/MySQL store: plain SQL on the outbox, open transactions and row locks. */
export function mysqlReaderControls(database: MysqlDatabase, names: MysqlTableNames, store: MysqlOutboxStore): ReaderControls {
  const outbox = names.outbox;
  return {
    async insertPlain(rows) {
      for (const row of rows) {
        await database.query(
          `INSERT INTO ${outbox} (topic, type, payload, \`key\`, headers, due_at)
            VALUES (?, ?, ?, ?, ?, IF(? IS NULL, NULL, TIMESTAMPADD(MICROSECOND, ? * 1000000, UTC_TIMESTAMP(6))))`,
          [row.topic, row.type, row.payload, row.key ?? null, JSON.stringify(row.headers ?? {}), row.dueInSeconds ?? null, row.dueInSeconds ?? null],
        );
      }
    },
    async rowVersions() {
      const { rows } = await database.query(`SELECT COUNT(*) AS n, SHA2(GROUP_CONCAT(MD5(${ROW_TEXT}) ORDER BY seq SEPARATOR ''), 256) AS v FROM ${outbox}`);
      return `${String(rows[0]?.n)} ${String(rows[0]?.v)} held[${await heldByOpenTransactions(database)}]`;
    },
    async makeDueNow() {
      await database.query(`UPDATE ${outbox} SET due_at = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE state = 'pending' AND due_at IS NOT NULL`);
    },
    async openEnqueue(messages: readonly NewOutboxMessage[]): Promise<OpenTransaction> {
      const open = await holdOpenMysql(database, async (tx) => void (await store.insert(tx, messages)));
      return {
        async end({ commit }) {
          open.finish(commit);
          await open.done;
        },
      };
    },
    async lockMessage(id: string): Promise<HeldLock> {
      const open = await holdOpenMysql(database, async (tx) => {
        const locked = await tx.query(`SELECT id FROM ${outbox} WHERE id = ? FOR UPDATE`, [id]);
        if (locked.rows.length !== 1) throw new Error(`no message ${id} to lock`);
      });
      return {
        waiting: () => blockedBy(database, open.connectionId),
        async end() {
          open.finish(true);
          await open.done;
        },
      };
    },
  };
}
