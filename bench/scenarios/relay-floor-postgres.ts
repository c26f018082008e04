import type pg from 'pg';
import { DEFAULT_WAKE_CHANNEL } from '../../src/stores/postgres/index.js';
import { services } from '../config.js';
import { idealTableSql } from '../contenders/ideal-relay-tables.js';
import { outboxerContender } from '../contenders/outboxer.js';
import { PostgresCpuMeter } from '../measure/process-cpu.js';
import { bulkLoad, uniqueName } from '../support/database.js';
import { HoldingsPoller } from '../support/partition-holdings.js';
import { MESSAGE_TYPE, payloadSql } from '../support/workload.js';
import { type FloorContestant, type FloorDatabase, type FloorRun, startIdealRelayProcess, startOutboxerRelay } from './relay-floor-database.js';

/**
 * (l) on PostgreSQL: outboxer's table in a schema of its own, migrated and bulk loaded by the (a) contender's code;
 * the ideal relay's table (primary key only) in another. The backlog is inserted in one transaction on the bench's
 * admin client, then COMMIT and a wake-up NOTIFY. CPU: every server process from /proc (PostgresCpuMeter).
 */
export async function postgresFloor(admin: pg.Client): Promise<FloorDatabase> {
  const meter = await PostgresCpuMeter.open(admin);
  const commitBacklog = async (load: () => Promise<void>, armed: () => Promise<void>): Promise<number> => {
    await admin.query('BEGIN');
    let committed: number;
    try {
      await load();
      await armed();
      await admin.query('COMMIT');
      committed = performance.now();
    } catch (error) {
      await admin.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
    await admin.query('SELECT pg_notify($1, $2)', [DEFAULT_WAKE_CHANNEL, '']);
    return committed;
  };
  const contestant = (side: 'ideal' | 'outboxer', run: FloorRun): FloorContestant => {
    const { workload } = run;
    if (side === 'outboxer') {
      const contender = outboxerContender({ workload, relayConnections: 1 }, { engine: run.sizes.engine });
      return {
        setup: () => contender.setup(admin),
        async start() {
          const relay = await startOutboxerRelay(run, services.postgresUrl, ['--schema', contender.schema, '--table', 'outbox']);
          const holdings = new HoldingsPoller(admin, contender.schema, 'outbox', 25);
          await holdings.until('the relay holds every partition', (h) => [...h.byRelay.values()].reduce((a, b) => a + b, 0) === h.partitions, 30_000);
          return relay;
        },
        commitBacklog: (count, armed) => commitBacklog(() => contender.load(admin, 0, count), armed),
        pending: () => contender.pending(admin),
        teardown: () => contender.teardown(admin),
      };
    }
    const schema = uniqueName('bench_ideal');
    const table = `"${schema}".outbox`;
    // the same rows as outboxer's load: plain SQL, keys round-robin, the same jsonb-built payload text
    const load = async (count: number) => {
      await bulkLoad(
        admin,
        count,
        (from, to) => `INSERT INTO ${table} (topic, type, key, payload)
        SELECT '${workload.topic}', '${MESSAGE_TYPE}', 'k-' || (g % ${workload.keys}), ${payloadSql('g', workload)}
        FROM generate_series(${from}, ${to}) g`,
      );
      await admin.query(`ANALYZE ${table}`);
    };
    return {
      setup: async () => void (await admin.query(idealTableSql(schema))),
      start: () => startIdealRelayProcess(run, services.postgresUrl, ['--schema', schema]),
      commitBacklog: (count, armed) => commitBacklog(() => load(count), armed),
      pending: async () => (await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]?.n ?? -1,
      teardown: async () => void (await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)),
    };
  };
  return {
    kind: 'postgres',
    label: 'PostgreSQL',
    cpuParts: ['pg', 'pgRelay', 'pgReaped'],
    meter:
      meter === null
        ? null
        : {
            start: () => meter.start(),
            async stop(relayPid) {
              const cpu = await meter.stop(relayPid);
              return { parts: { pg: cpu.total, pgRelay: cpu.relayBackends, pgReaped: cpu.reaped }, otherSessions: cpu.otherSessions };
            },
          },
    notes: [
      ...(meter === null ? ['PostgreSQL runs out of sight of /proc here (another pid namespace): its CPU is not measured.'] : []),
      "PostgreSQL: the backlog is committed with a wake-up NOTIFY (both relays LISTEN). pg = every PostgreSQL process (postmaster, its live children, and the children reaped meanwhile: autovacuum workers, ended sessions) less the live backends of other sessions (other suites share the server; otherSessions counts them) and of the bench; pgRelay = the backends of the relay process's own connections (by client port); pgReaped = the reaped part of pg, which can include other suites' short sessions.",
    ],
    contestant,
  };
}
