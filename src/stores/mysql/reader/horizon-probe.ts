import type { MysqlDatabase, MysqlExecutor } from '../database.js';
import { checkProcessPrivilege } from '../connection-errors.js';

/** Microseconds since the epoch on the server clock, as exact decimal text: the tag of a read that passed rows. */
export async function readTag(executor: MysqlExecutor): Promise<string> {
  const { rows } = await executor.query(`SELECT CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) AS CHAR) AS tag`);
  return String(rows[0]?.tag);
}

/**
 * The oldest start of a running transaction (`information_schema.INNODB_TRX`, whole seconds), minus 1 µs: every
 * transaction that began before it has ended, so a late commit into a range tagged at or below it is visible to
 * a SELECT that starts after this probe (docs/design/read-path.md, "Late commits").
 *
 * InnoDB serves INNODB_TRX from a cache that it refreshes only once the cache has gone unread for 100 ms, and
 * every read restarts that wait (trx0i_s.cc, `can_cache_be_updated`): under reads closer than 100 ms it stays
 * at its old snapshot indefinitely, and a transaction begun since would be missing. So the probe proves the
 * snapshot fresh: it opens a transaction of its own first and trusts the list only if that transaction is in it
 * (then the list was built after the probe began, and the probe's own start bounds the horizon). A stale list
 * leaves the horizon where it was, which only delays rechecks.
 *
 * A transaction that, in that fresh list, runs no statement and has modified no row has no outbox row below
 * anything: a seq it draws later is above every range tagged before the probe, so it is left out (an idle
 * reporting transaction or `mysqldump --single-transaction` does not hold rechecks back). Any other transaction
 * of the server counts, whatever database it writes: the list does not say which tables a transaction wrote.
 *
 * `trx_started` is the server's system local time whatever the session's `time_zone`, so it is converted from
 * SYSTEM to UTC (the tags are UTC): `UNIX_TIMESTAMP` would read it in the session's zone and, in a zone behind the
 * system's, put the horizon hours ahead and settle a recheck while a transaction below it was still open.
 */
async function probeHorizon(database: MysqlDatabase): Promise<string | null> {
  return database.session(async (session) => {
    // Before the probe's transaction begins: a transaction missing from a list built after that began later, and
    // draws its seqs above every range tagged before this time.
    const startedAt = BigInt(await readTag(session));
    await session.query('START TRANSACTION WITH CONSISTENT SNAPSHOT');
    try {
      const { rows } = await session.query(`SELECT MAX(trx_mysql_thread_id = CONNECTION_ID()) AS fresh,
          CAST(MIN(IF(trx_mysql_thread_id = CONNECTION_ID(), NULL,
            TIMESTAMPDIFF(SECOND, '1970-01-01 00:00:00', CONVERT_TZ(trx_started, 'SYSTEM', '+00:00')))) * 1000000 AS CHAR) AS oldest
        FROM information_schema.INNODB_TRX
        WHERE trx_mysql_thread_id = CONNECTION_ID()
          OR (trx_autocommit_non_locking = 0 AND (trx_rows_modified > 0 OR trx_query IS NOT NULL OR trx_state <> 'RUNNING'))`);
      const row = rows[0];
      if (Number(row?.fresh) !== 1) return null;
      const oldest = row?.oldest === null || row?.oldest === undefined ? startedAt : BigInt(String(row.oldest));
      return ((oldest < startedAt ? oldest : startedAt) - 1n).toString();
    } catch (error) {
      await checkProcessPrivilege(session);
      throw error;
    } finally {
      await session.query('COMMIT');
    }
  });
}

/**
 * How often one reader probes, jittered. Every read of INNODB_TRX by anyone on the server restarts the cache's idle
 * time, so the probes of all relays on a server together must leave gaps over 100 ms for the list to refresh; a
 * stale list only keeps the last horizon. A range settles at the first fresh probe after its writers ended.
 */
const PROBE_EVERY_MS = 150;
const PROBE_JITTER_MS = 100;
/** Before the first fresh probe, how many times to wait out the cache's idle time and try again. */
const FIRST_PROBE_TRIES = 4;
const CACHE_IDLE_MS = 110;

/**
 * One reader's horizon: probed every 150-250 ms and reused in between (an older horizon is lower, so a reuse
 * is safe: it only settles fewer rechecks). Never goes backwards.
 */
export class HorizonProbe {
  readonly #database: MysqlDatabase;
  #horizon: string | null = null;
  #next = 0;

  constructor(database: MysqlDatabase) {
    this.#database = database;
  }

  async horizon(): Promise<string> {
    if (this.#horizon !== null && Date.now() < this.#next) return this.#horizon;
    this.#next = Date.now() + PROBE_EVERY_MS + Math.random() * PROBE_JITTER_MS;
    let probed = await probeHorizon(this.#database);
    for (let tries = 1; probed === null && this.#horizon === null && tries < FIRST_PROBE_TRIES; tries++) {
      await new Promise((resolve) => setTimeout(resolve, CACHE_IDLE_MS));
      probed = await probeHorizon(this.#database);
    }
    if (probed !== null && (this.#horizon === null || BigInt(probed) > BigInt(this.#horizon))) this.#horizon = probed;
    return this.#horizon ?? '0';
  }
}
