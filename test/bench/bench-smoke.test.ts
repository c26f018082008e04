import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sizes } from '../../bench/config.js';
import type { BenchResult } from '../../bench/report.js';
import type { ScenarioResult } from '../../bench/scenarios/scenario.js';

/**
 * The benchmark's smoke run (`--size smoke`, every scenario, both brokers) through the real CLI. It fails
 * when a scenario breaks — an error, a count that does not match, a latency that is not a number — never on
 * how fast anything was: the machine is shared, and targets are judged on full runs only.
 */
const out = mkdtempSync(join(tmpdir(), 'outboxer-bench-'));
let exitCode: number | null = null;
let stderr = '';
let result: BenchResult;

function runCli(): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--size', 'smoke', '--scenario', 'all', '--broker', 'both', '--out', out], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', resolve);
  });
}

function scenario(id: string): ScenarioResult {
  const found = result.scenarios.find((s) => s.id === id);
  if (found === undefined) throw new Error(`scenario ${id} missing from the result; errors: ${JSON.stringify(result.errors)}`);
  return found;
}

function metric(s: ScenarioResult, contender: string, name: string, broker?: string): number {
  const row = s.rows.find((r) => r.contender === contender && (broker === undefined || r.broker === broker));
  const value = row?.metrics[name];
  if (typeof value !== 'number') throw new Error(`scenario ${s.id}: no numeric ${name} for ${contender} ${broker ?? ''}`);
  return value;
}

describe('npm run bench -- --size smoke', () => {
  beforeAll(async () => {
    exitCode = await runCli();
    const file = readdirSync(out).find((name) => name.endsWith('.json'));
    if (file === undefined) throw new Error(`the smoke run wrote no result (exit ${exitCode}):\n${stderr.slice(-2000)}`);
    result = JSON.parse(readFileSync(join(out, file), 'utf8')) as BenchResult;
  }, 240_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('runs every scenario without errors and every sanity check passes', () => {
    expect(result.errors).toEqual([]);
    expect(result.scenarios.map((s) => s.id)).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'm']);
    const failed = result.scenarios.flatMap((s) => s.checks.filter((c) => !c.ok).map((c) => `${s.id}: ${c.name} (${c.detail})`));
    expect(failed).toEqual([]);
    expect(exitCode, stderr.slice(-2000)).toBe(0);
  });

  it('(a) drains the whole backlog to both brokers, with a ceiling to compare with', () => {
    const a = scenario('a');
    for (const broker of ['rabbitmq', 'nats']) {
      expect(metric(a, 'outboxer', 'confirmed', broker)).toBe(sizes.smoke.drainMessages);
      expect(metric(a, 'broker ceiling', 'perSecond', broker)).toBeGreaterThan(0);
      expect(Number.isFinite(metric(a, 'outboxer', 'ratio', broker))).toBe(true);
      expect(metric(a, 'outboxer+ops', 'confirmed', broker)).toBe(sizes.smoke.drainMessages);
      const observed = a.targets.find((t) => t.name === `drain ${broker}: metrics and tracing on >= 0.95 x off`);
      expect(Number.isFinite(observed?.value)).toBe(true);
    }
  });

  it('(a, c) run outboxer on MariaDB and SQLite beside PostgreSQL: each drains the whole backlog in key order and has a writer ratio', () => {
    for (const name of ['outboxer (MariaDB)', 'outboxer (SQLite)']) {
      for (const broker of ['rabbitmq', 'nats']) {
        expect(metric(scenario('a'), name, 'confirmed', broker)).toBe(sizes.smoke.drainMessages);
        expect(metric(scenario('a'), name, 'keyOrderViolations', broker)).toBe(0);
        expect(Number.isFinite(scenario('a').targets.find((t) => t.name === `drain ${broker} >= 0.9 x broker ceiling (${name})`)?.value)).toBe(true);
      }
      expect(metric(scenario('c'), name, 'stoppedTxPerSecond')).toBeGreaterThan(0);
      expect(Number.isFinite(scenario('c').targets.find((t) => t.name === `writer throughput with relay >= 0.9 x without (${name})`)?.value)).toBe(true);
    }
  });

  it('(b) measures finite commit-to-confirm latencies and every commit is confirmed', () => {
    const b = scenario('b');
    const rate = sizes.smoke.steadyRates[0] as number;
    for (const broker of ['rabbitmq', 'nats']) {
      for (const name of [`p50Ms@${rate}`, `p99Ms@${rate}`, `maxMs@${rate}`]) expect(Number.isFinite(metric(b, 'outboxer', name, broker))).toBe(true);
      expect(metric(b, 'outboxer', 'unconfirmedAtEnd', broker)).toBe(0);
    }
  });

  it('(a, b) run the job queues beside the relays (at smoke size with the first broker only), and they publish', () => {
    for (const name of ['pg-boss', 'graphile-worker']) {
      expect(metric(scenario('a'), name, 'confirmed', 'rabbitmq')).toBeGreaterThan(0);
      expect(Number.isFinite(metric(scenario('b'), name, `p99Ms@${sizes.smoke.steadyRates[0] as number}`, 'rabbitmq'))).toBe(true);
      expect(scenario('a').rows.some((row) => row.contender === name && row.broker === 'nats')).toBe(false);
    }
  });

  it('(c, d, e, f) produce numbers for every contender that runs in them', () => {
    const relays = ['outboxer', 'naive relay', 'pg-transactional-outbox (polling)'];
    for (const [id, name, contenders] of [
      ['c', 'ratio', [...relays, 'pg-boss', 'graphile-worker', 'outboxer (MariaDB)', 'outboxer (SQLite)']],
      ['d', 'perSecond', [...relays, 'pg-boss', 'graphile-worker']],
      ['e', 'p99Ratio', relays],
      ['f', 'ratio', relays],
    ] as const) {
      const s = scenario(id);
      expect(s.rows.map((r) => r.contender)).toEqual(contenders);
      for (const row of s.rows) expect(Number.isFinite(metric(s, row.contender, name))).toBe(true);
    }
    expect(metric(scenario('d'), 'outboxer', 'statements')).toBeGreaterThanOrEqual(0);
  });

  it('(g) drains the backlog with each number of relay processes and reads their peak memory', () => {
    const g = scenario('g');
    for (const broker of ['rabbitmq', 'nats']) {
      for (const processes of sizes.smoke.scaleRelays) {
        const name = `outboxer relay x${processes}`;
        expect(metric(g, name, 'confirmed', broker)).toBe(sizes.smoke.scaleMessages);
        expect(Number.isFinite(metric(g, name, 'vs1Relay', broker))).toBe(true);
        expect(Number.isFinite(metric(g, name, 'vsCeiling', broker))).toBe(true);
        expect(metric(g, name, 'peakRssMb', broker)).toBeGreaterThan(0);
        expect(metric(g, name, 'peakRssMb', broker)).toBeGreaterThanOrEqual(metric(g, name, 'startRssMb', broker));
      }
    }
  });

  it('(h) times late commits beside in-order ones on both writer paths, every message confirmed in key order', () => {
    const h = scenario('h');
    for (const broker of ['rabbitmq', 'nats']) {
      const rows = h.rows.filter((row) => row.contender === 'outboxer' && row.broker === broker);
      expect(rows.map((row) => row.metrics.path)).toEqual(['wake', 'transaction']);
      for (const row of rows) {
        for (const name of ['inOrderP99Ms', 'otherKeyP99Ms', 'sameKeyP99Ms']) expect(Number.isFinite(row.metrics[name])).toBe(true);
        expect(row.metrics.unconfirmed).toBe(0);
        expect(row.metrics.keyOrderViolations).toBe(0);
      }
    }
  });

  it('(i) times every join, death and leave of relay processes, and the trickle beside them loses nothing and keeps key order', () => {
    const i = scenario('i');
    const rounds = sizes.smoke.rebalanceRounds;
    for (const [kind, samples] of [
      ['join', 2 * rounds],
      ['death (SIGKILL)', rounds],
      ['leave (SIGTERM)', rounds],
    ] as const) {
      expect(metric(i, kind, 'samples')).toBe(samples);
      expect(metric(i, kind, 'maxMs')).toBeGreaterThan(0);
      expect(Number.isFinite(metric(i, kind, 'maxLeases'))).toBe(true);
    }
    expect(Number.isFinite(metric(i, 'death (SIGKILL)', 'afterExpiryMaxMs'))).toBe(true);
    expect(metric(i, 'trickle', 'written')).toBeGreaterThan(0);
    expect(metric(i, 'trickle', 'delivered')).toBe(metric(i, 'trickle', 'written'));
    expect(metric(i, 'trickle', 'keyOrderViolations')).toBe(0);
  });

  it('(j) times enqueue through every ORM adapter beside raw pg, one statement where the driver vouches and two where the store probes, and commit-to-confirm through each', () => {
    const j = scenario('j');
    expect(j.rows.map((row) => row.contender)).toEqual(['raw pg', 'Kysely', 'Knex', 'Drizzle', 'Prisma', 'TypeORM', 'MikroORM', 'Sequelize']);
    expect(metric(j, 'raw pg', 'statements')).toBe(1);
    for (const row of j.rows) {
      for (const name of ['enqueueP50Us', 'cpuUs', 'p50VsRaw', 'confirmP50Ms', 'confirmP99Ms', 'confirmP99VsRaw'])
        expect(Number.isFinite(metric(j, row.contender, name))).toBe(true);
      expect(metric(j, row.contender, 'statements')).toBe(row.metrics.status === 'open' ? 1 : 2);
    }
    expect(j.targets.map((t) => t.name)).toEqual(j.rows.slice(1).map((row) => `${row.contender}: enqueue time <= 1.05 x raw pg`));
  });

  it('(m) drains its preloaded copy through the outboxer consumer with the inbox and through the minimal consumer, on both brokers, with rates and CPU', () => {
    const m = scenario('m');
    for (const broker of ['rabbitmq', 'nats']) {
      for (const name of ['minimal consumer', 'outboxer consumer + inbox']) {
        expect(metric(m, name, 'perSecond', broker)).toBeGreaterThan(0);
        expect(Number.isFinite(metric(m, name, 'consumerUsPerMsg', broker))).toBe(true);
      }
      expect(Number.isFinite(m.targets.find((t) => t.name === `${broker}: consumer with inbox >= 0.9 x the minimal consumer`)?.value)).toBe(true);
    }
  });
});
