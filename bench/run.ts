import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ENGINES, type SizeName, type Sizes, sizes as presets } from './config.js';
import type { ContenderFactory } from './contenders/contender.js';
import { graphileWorkerContender } from './contenders/graphile-worker.js';
import { naiveRelayContender } from './contenders/naive-relay.js';
import { outboxerContender } from './contenders/outboxer.js';
import { outboxerMysqlContender } from './contenders/outboxer-mysql.js';
import { outboxerSqliteContender } from './contenders/outboxer-sqlite.js';
import { pgBossContender } from './contenders/pg-boss.js';
import { pgTransactionalOutboxContender } from './contenders/pg-transactional-outbox.js';
import { collectConditions } from './measure/conditions.js';
import { installQueryCounter } from './measure/query-counter.js';
import { type BenchResult, renderMarkdown } from './report.js';
import { backlogDrain } from './scenarios/backlog-drain.js';
import { claimScaling } from './scenarios/claim-scaling.js';
import { consumerInbox } from './scenarios/consumer-inbox.js';
import { heldSnapshot } from './scenarios/held-snapshot.js';
import { idleQueries } from './scenarios/idle-queries.js';
import { lateCommit } from './scenarios/late-commit.js';
import { ormAdapters } from './scenarios/orm-adapters.js';
import { publisherDrain } from './scenarios/publisher-drain.js';
import { rebalance } from './scenarios/rebalance.js';
import { relayFloor } from './scenarios/relay-floor.js';
import { scaleOut } from './scenarios/scale-out.js';
import { FLOOR_DATABASES, type FloorDatabaseKind } from './scenarios/relay-floor-database.js';
import type { Scenario, ScenarioContext } from './scenarios/scenario.js';
import { steadyLoad } from './scenarios/steady-load.js';
import { writerThroughput } from './scenarios/writer-throughput.js';
import { adminClient } from './support/database.js';
import type { BrokerKind } from './support/broker-target.js';

const SCENARIOS: Record<string, Scenario> = {
  a: backlogDrain,
  b: steadyLoad,
  c: writerThroughput,
  d: idleQueries,
  e: claimScaling,
  f: heldSnapshot,
  g: scaleOut,
  h: lateCommit,
  i: rebalance,
  j: ormAdapters,
  k: publisherDrain,
  l: relayFloor,
  m: consumerInbox,
};
/**
 * Left out of `--scenario all` at `--size smoke` (the CI run): (k) needs Redis, Mosquitto and a receiver; (l) measures
 * CPU from /proc over 100k-message drains and says little at smoke size. Ask for them by name.
 */
const NOT_IN_SMOKE_ALL = new Set(['k', 'l']);

interface ContenderEntry {
  readonly factory: ContenderFactory;
  /** The scenarios it runs in (the job queues: see "What is compared" in BENCHMARKS.md). */
  readonly scenarios: string;
  /** At `--size smoke`, only with the first broker: keeps the CI run near a minute. */
  readonly oneBrokerAtSmoke?: boolean;
  /** Its database when that is not PostgreSQL: the report's conditions then name its version and settings. */
  readonly database?: 'mariadb' | 'sqlite';
}

function contenderTable(sizes: Sizes): Record<string, ContenderEntry> {
  return {
    outboxer: { factory: (options) => outboxerContender(options, { engine: sizes.engine }), scenarios: 'abcdefh' },
    'outboxer+ops': { factory: (options) => outboxerContender(options, { engine: sizes.engine, observed: true }), scenarios: 'ab' },
    naive: { factory: naiveRelayContender, scenarios: 'abcdef' },
    peer: { factory: pgTransactionalOutboxContender, scenarios: 'abcdef' },
    pgboss: { factory: pgBossContender, scenarios: 'abcd', oneBrokerAtSmoke: true },
    graphile: { factory: graphileWorkerContender, scenarios: 'abcd', oneBrokerAtSmoke: true },
    // issue 12: the drain and writer targets on the other databases, beside PostgreSQL's in the same run
    'outboxer-mariadb': { factory: outboxerMysqlContender, scenarios: 'ac', database: 'mariadb' },
    'outboxer-sqlite': { factory: outboxerSqliteContender, scenarios: 'ac', database: 'sqlite' },
  };
}
const DEFAULT_CONTENDERS = 'outboxer,outboxer+ops,naive,peer,pgboss,graphile,outboxer-mariadb,outboxer-sqlite';
const USAGE = `npm run bench -- [--scenario a|b|c|d|e|f|g|h|i|j|k|l|m|all (comma-separated)] [--size smoke|full] [--broker rabbitmq|nats|both]
  [--contenders ${DEFAULT_CONTENDERS}] [--set sizeKey=value ...] [--out bench/results/]
  (k) drains through the Redis Streams, MQTT and webhook publishers beside each one's own client (BENCH_PUBLISHERS=redis,mqtt,webhook narrows it);
  --broker does not apply to it, and at --size smoke "all" leaves it out;
  (l) drains through outboxer's relay process beside the ideal unordered relay of issue 23 (floorMessages, floorRounds),
  on --db postgres|mariadb|sqlite|all (comma-separated; default postgres), each against its own ideal relay;
  at --size smoke "all" leaves it out too;
  (m) drains preloaded messages through outboxer's consumer with its PostgreSQL inbox beside a minimal consumer (consumerMessages, consumerRounds)`;

function applyOverrides(base: Sizes, sets: readonly string[]): { sizes: Sizes; overrides: Record<string, string> } {
  const sizes: Record<string, unknown> = { ...base };
  const overrides: Record<string, string> = {};
  for (const set of sets) {
    const [key, value] = set.split('=', 2);
    if (key === undefined || value === undefined || !(key in base)) throw new Error(`--set ${set}: expected one of ${Object.keys(base).join(', ')}=value`);
    const current = base[key as keyof Sizes];
    if (key === 'engine' && !ENGINES.includes(value as Sizes['engine'])) throw new Error(`--set engine=${value}: expected one of ${ENGINES.join(', ')}`);
    sizes[key] = Array.isArray(current) ? value.split(',').map(Number) : typeof current === 'string' ? value : Number(value);
    overrides[key] = value;
  }
  return { sizes: sizes as unknown as Sizes, overrides };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      scenario: { type: 'string', default: 'all' },
      size: { type: 'string', default: 'full' },
      broker: { type: 'string', default: 'both' },
      db: { type: 'string', default: 'postgres' },
      contenders: { type: 'string', default: DEFAULT_CONTENDERS },
      set: { type: 'string', multiple: true, default: [] },
      out: { type: 'string', default: 'bench/results/' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const size = values.size as SizeName;
  if (!(size in presets)) throw new Error(`--size must be smoke or full\n${USAGE}`);
  const ids = values.scenario === 'all' ? Object.keys(SCENARIOS).filter((id) => size !== 'smoke' || !NOT_IN_SMOKE_ALL.has(id)) : values.scenario.split(',');
  for (const id of ids) if (!(id in SCENARIOS)) throw new Error(`unknown scenario ${id}\n${USAGE}`);
  const brokers: BrokerKind[] = values.broker === 'both' ? ['rabbitmq', 'nats'] : [values.broker as BrokerKind];
  if (!brokers.every((b) => b === 'rabbitmq' || b === 'nats')) throw new Error(`--broker must be rabbitmq, nats or both\n${USAGE}`);
  const floorDatabases = (values.db === 'all' ? [...FLOOR_DATABASES] : values.db.split(',')) as FloorDatabaseKind[];
  if (!floorDatabases.every((db) => FLOOR_DATABASES.includes(db))) throw new Error(`--db must be postgres, mariadb, sqlite or all\n${USAGE}`);
  const { sizes, overrides } = applyOverrides(presets[size], values.set);
  const table = contenderTable(sizes);
  const chosen = values.contenders.split(',').map((name) => {
    const entry = table[name];
    if (entry === undefined) throw new Error(`unknown contender ${name}; known: ${Object.keys(table).join(', ')}`);
    return entry;
  });
  const contendersFor = (id: string, broker?: BrokerKind) =>
    chosen
      .filter((entry) => entry.scenarios.includes(id) && (broker === undefined || size !== 'smoke' || entry.oneBrokerAtSmoke !== true || broker === brokers[0]))
      .map((entry) => entry.factory);

  installQueryCounter();
  const admin = await adminClient();
  const log = (message: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
  const databases = new Set(chosen.flatMap((entry) => (entry.database === undefined ? [] : [entry.database])));
  if (ids.includes('l')) for (const db of floorDatabases) if (db !== 'postgres') databases.add(db);
  const result: BenchResult = { size, overrides, conditions: await collectConditions(admin, databases), scenarios: [], errors: [] };
  const context: Omit<ScenarioContext, 'contenders' | 'contendersOn'> = { size, sizes, brokers, databases: floorDatabases, admin, log };
  try {
    for (const id of ids) {
      const started = performance.now();
      try {
        const scenario = await (SCENARIOS[id] as Scenario)({ ...context, contenders: contendersFor(id), contendersOn: (broker) => contendersFor(id, broker) });
        scenario.seconds = (performance.now() - started) / 1000;
        result.scenarios.push(scenario);
      } catch (error) {
        log(`scenario ${id} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        result.errors.push({ scenario: id, error: error instanceof Error ? error.message : String(error) });
      }
    }
  } finally {
    await admin.end();
  }
  mkdirSync(values.out, { recursive: true });
  const stamp = result.conditions.date.replaceAll(':', '-').replace(/\..*/, '');
  const base = join(values.out, `result-${stamp}`);
  writeFileSync(`${base}.json`, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(`${base}.md`, renderMarkdown(result));
  console.log(`${base}.json`);
  console.log(`${base}.md`);
  const failed = result.errors.length + result.scenarios.reduce((n, s) => n + s.checks.filter((c) => !c.ok).length, 0);
  if (failed > 0) log(`${failed} scenario error(s) or failed sanity check(s)`);
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  },
);
