/**
 * The ci set of the fault-injection suite (`npm run chaos -- --set ci`), seeded, asserted on the
 * numbers of its JSON report: no loss, no phantom, no order inversion, no unattributed duplicate, no
 * stuck message, a drain, and no canary password in any output; the hand-over and broker-cut figures
 * within their targets; and, for the fan-out scenario, every destination counted apart and the healthy
 * destinations' latency during the partner's outage within its target. Run it alone: it starts 6+ processes.
 * About 5-6 minutes on the 2-core machine (9 scenarios of 15-60 s each).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ScenarioReport } from '../../chaos/checker.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SEED = Number(process.env.CHAOS_SEED ?? 20_261_121);
const OUT = join(ROOT, '.chaos', 'ci-smoke');
const BOUND_MS = 480_000;

function runChaos(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'chaos/run.ts', '--set', 'ci', '--seed', String(SEED), '--out', OUT], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGTERM'), BOUND_MS);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('chaos ci set', () => {
  it(
    `meets every target under faults (seed ${SEED})`,
    async () => {
      const { code, output } = await runChaos();
      const reports = JSON.parse(readFileSync(join(OUT, `summary-ci-${SEED}.json`), 'utf8')) as ScenarioReport[];
      expect(reports.length, output).toBeGreaterThanOrEqual(5);
      for (const r of reports) {
        const where = `${r.scenario} seed ${r.seed}: ${JSON.stringify(r.samples)}`;
        expect(r.committed, where).toBeGreaterThan(0);
        expect(r.writerFailures, where).toBe(0);
        expect(r.faults.length, `${where}: no fault was injected`).toBeGreaterThan(0);
        expect(r.lost, where).toBe(0);
        expect(r.phantom, where).toBe(0);
        expect(r.orderInversions, where).toBe(0);
        expect(r.duplicatesUnattributed, where).toBe(0);
        expect(r.faultsOverBudget, where).toEqual([]);
        expect(r.poisonNotDead, where).toBe(0);
        expect(r.normalDead, where).toBe(0);
        expect(r.leftPending, where).toBe(0);
        expect(r.stuck, where).toBe(0);
        expect(r.drainMs, where).not.toBeNull();
        expect(r.canaryLeaks, where).toEqual([]);
        expect(r.ownership?.missed ?? [], where).toEqual([]);
        expect(r.fanOut?.missed ?? [], where).toEqual([]);
      }
      const measured = reports.filter((r) => r.ownership !== undefined);
      expect(measured.map((r) => r.scenario).sort(), output).toEqual(['rabbit-broker-cut-one-relay', 'rabbit-hand-over']);
      // fan-out (issue 21): three destinations, the partner cut for 15 s; each destination counted apart
      const fannedOut = reports.filter((r) => r.fanOut !== undefined);
      expect(
        fannedOut.map((r) => r.scenario),
        output,
      ).toEqual(['fan-out-destination-outage-short']);
      for (const r of fannedOut) {
        const where = `${r.scenario} seed ${r.seed}: ${JSON.stringify(r.byDestination)}`;
        expect(Object.keys(r.byDestination ?? {}), where).toEqual(['default', 'partner', 'analytics']);
        for (const counts of Object.values(r.byDestination ?? {})) {
          expect(counts.committed, where).toBeGreaterThan(0);
          expect([counts.lost, counts.phantom, counts.orderInversions, counts.duplicatesUnattributed, counts.stuck], where).toEqual([0, 0, 0, 0, 0]);
        }
        const [outage] = r.fanOut?.outages ?? [];
        expect(outage?.destination, where).toBe('partner');
        expect(outage?.pausedAfterMs, where).not.toBeNull();
        expect(outage?.caughtUpMs, where).not.toBeNull();
        const healthy = (r.fanOut?.destinations ?? []).filter((d) => !d.cut);
        expect(
          healthy.map((d) => d.destination),
          where,
        ).toEqual(['default', 'analytics']);
        for (const d of healthy) expect(d.during.p99Ms, `${where}: ${d.destination}`).toBeLessThanOrEqual(d.boundP99Ms ?? 0);
      }
      expect(code, output).toBe(0);
    },
    BOUND_MS + 30_000,
  );
});
