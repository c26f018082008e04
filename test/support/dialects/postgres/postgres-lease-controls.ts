import type { PgDatabase } from '../../../../src/stores/postgres/database.js';
import type { LeaseControls, RelayLock } from '../../../conformance/lease-harness.js';

type Sql = (text: string, params?: unknown[]) => Promise<readonly Record<string, unknown>[]>;

/**
 * The lease conformance controls for the PostgreSQL store (pg and PGlite): plain SQL on the side tables.
 * Given a `database` that runs sessions side by side (a pool, not PGlite's one session), they include `lockRelay`.
 */
export function postgresLeaseControls(sql: Sql, schema: string, options: { database?: PgDatabase; table?: string } = {}): LeaseControls {
  const table = options.table ?? 'outbox';
  const relays = `"${schema}"."${table}_relays"`;
  const partitions = `"${schema}"."${table}_partitions"`;
  const partitioning = `"${schema}"."${table}_partitioning"`;
  const database = options.database;
  const lockRelay = async (relayId: string): Promise<RelayLock> => {
    if (database === undefined) throw new Error('lockRelay needs a database that runs sessions side by side');
    let locked!: (pid: number) => void;
    let finish!: (reap: boolean) => void;
    const pid = new Promise<number>((resolve) => (locked = resolve));
    const ending = new Promise<boolean>((resolve) => (finish = resolve));
    const done = database.transaction(async (tx) => {
      const me = await tx.query(`SELECT pg_backend_pid() AS pid FROM ${relays} WHERE relay_id = $1 FOR UPDATE`, [relayId]);
      locked(Number((me.rows[0] as { pid: number }).pid));
      if (await ending) {
        await tx.query(`DELETE FROM ${relays} WHERE relay_id = $1`, [relayId]);
        await tx.query(`UPDATE ${partitions} SET owner = NULL, state = 'free', unclean = unclean + 1 WHERE owner = $1`, [relayId]);
      }
    });
    const holder = await pid;
    return {
      async waiting() {
        const rows = await sql('SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))', [holder]);
        return Number(rows[0]?.n);
      },
      async end({ reap }) {
        finish(reap);
        await done;
      },
    };
  };
  return {
    ...(database === undefined ? {} : { lockRelay }),
    async expireRelay(relayId) {
      const rows = await sql(`UPDATE ${relays} SET expires_at = now() - interval '1 second' WHERE relay_id = $1 RETURNING relay_id`, [relayId]);
      if (rows.length !== 1) throw new Error(`no relay ${relayId} to expire`);
    },
    async configure({ resizeTo }) {
      await sql(`UPDATE ${partitioning} SET resize_to = $1`, [resizeTo ?? null]);
    },
  };
}
