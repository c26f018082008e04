import { type ChildProcess, spawn } from 'node:child_process';
import { access, constants, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboardScenario, type DashboardScenario } from '../browser/dashboard-scenario.js';
import { closedPort } from '../support/rabbitmq-harness.js';
import { waitFor } from '../support/wait-for.js';

const PROMETHEUS = process.env.OUTBOXER_TEST_PROMETHEUS ?? '/usr/bin/prometheus';
const RULES = new URL('../../docs/alerts/outboxer-rules.yml', import.meta.url).pathname;

/** Every metric the shipped alert rules read: a rule on a name the relay does not export would never fire. */
const METRICS_THE_RULES_READ = [
  'outboxer_oldest_pending_age_seconds',
  'outboxer_dead_total',
  'outboxer_relays_alive',
  'outboxer_relay_ready',
  'outboxer_partitions',
  'outboxer_partitions_owned',
];

interface PrometheusServer {
  readonly url: string;
  query(expression: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  get<T>(path: string): Promise<T>;
  stop(): Promise<void>;
}

/** A real Prometheus server (Debian's package) in a temporary directory, scraping `target` every second with the shipped rules. */
async function startPrometheus(target: string): Promise<PrometheusServer> {
  try {
    await access(PROMETHEUS, constants.X_OK);
  } catch {
    throw new Error(`${PROMETHEUS} is missing: install Debian's prometheus package (bash .ci/services does), or set OUTBOXER_TEST_PROMETHEUS`);
  }
  const directory = await mkdtemp(join(tmpdir(), 'outboxer-prometheus-'));
  const port = await closedPort();
  const url = `http://127.0.0.1:${port}`;
  await writeFile(
    join(directory, 'prometheus.yml'),
    [
      'global: { scrape_interval: 1s, evaluation_interval: 1s }',
      `rule_files: [${JSON.stringify(RULES)}]`,
      'scrape_configs:',
      '  - job_name: outboxer-relay',
      '    scrape_interval: 1s',
      `    static_configs: [{ targets: [${JSON.stringify(target)}] }]`,
      '',
    ].join('\n'),
  );
  const log = await open(join(directory, 'prometheus.log'), 'w');
  const child: ChildProcess = spawn(
    PROMETHEUS,
    [`--config.file=${join(directory, 'prometheus.yml')}`, `--storage.tsdb.path=${join(directory, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: ['ignore', log.fd, log.fd] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await log.close();
    await rm(directory, { recursive: true, force: true });
  };
  const get = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${url}${path}`);
    if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
    return ((await response.json()) as { data: T }).data;
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}: ${await readFile(join(directory, 'prometheus.log'), 'utf8')}`);
        return (await fetch(`${url}/-/ready`)).ok;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: 'prometheus to be ready' },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    get,
    query: async (expression) =>
      (await get<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(`/api/v1/query?query=${encodeURIComponent(expression)}`)).result,
    stop,
  };
}

describe('a real Prometheus server scraping a relay', () => {
  let scenario: DashboardScenario;
  let prometheus: PrometheusServer;

  beforeAll(async () => {
    scenario = await startDashboardScenario();
    scenario.relay.start();
    prometheus = await startPrometheus(new URL(scenario.url).host);
  });

  afterAll(async () => {
    await prometheus?.stop();
    await scenario?.close();
  });

  it("scrapes outboxer_published_total from the relay's /metrics as it publishes", async () => {
    await scenario.enqueue(scenario.topic('orders'), 40);
    await scenario.exchange.waitForDeliveries(40);
    const [sample] = await waitFor(
      async () => {
        const result = await prometheus.query('outboxer_published_total{job="outboxer-relay"}');
        return result.length === 1 && Number(result[0]?.value[1]) === 40 ? result : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: 'prometheus to scrape outboxer_published_total = 40' },
    );
    expect(sample?.metric).toMatchObject({ __name__: 'outboxer_published_total', job: 'outboxer-relay', instance: new URL(scenario.url).host });
    const [up] = await prometheus.query('up{job="outboxer-relay"}');
    expect(up?.value[1]).toBe('1');
  });

  it('finds every metric the alert rules read', async () => {
    for (const name of METRICS_THE_RULES_READ) {
      const result = await waitFor(
        async () => {
          const found = await prometheus.query(`${name}{job="outboxer-relay"}`);
          return found.length > 0 ? found : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 250, what: `prometheus to have ${name}` },
      );
      expect(result.length, name).toBeGreaterThan(0);
    }
    const [unowned] = await prometheus.query('max by (job) (outboxer_partitions) - sum by (job) (outboxer_partitions_owned)');
    expect(unowned?.value[1]).toBe('0');
  });

  it('loads the shipped rules, evaluates them without error, and none fires on a healthy relay', async () => {
    interface Rules {
      groups: { name: string; rules: { name: string; type: string; health: string; state: string; labels: Record<string, string> }[] }[];
    }
    // Right after Prometheus starts, before its first scrape, OutboxerNoRelayAlive is pending (its `for` covers that).
    const { groups } = await waitFor(
      async () => {
        const rules = await prometheus.get<Rules>('/api/v1/rules');
        const states = rules.groups.flatMap((group) => group.rules).map((rule) => `${rule.name}: ${rule.health}, ${rule.state}`);
        if (states.length === 0 || states.some((state) => !state.endsWith(': ok, inactive')))
          throw new Error(`rules not all evaluated and inactive: ${states.join('; ')}`);
        return rules;
      },
      { timeoutMs: 20_000, intervalMs: 250, what: 'every rule evaluated, none pending or firing' },
    );
    expect(groups.map((group) => group.name)).toEqual(['outboxer']);
    const rules = groups[0]?.rules ?? [];
    expect(rules.map((rule) => rule.name).sort()).toEqual([
      'OutboxerDeadMessagesGrowing',
      'OutboxerNoRelayAlive',
      'OutboxerOldestPendingAgeHigh',
      'OutboxerOldestPendingOverSLO',
      'OutboxerPartitionUnowned',
      'OutboxerRelayNotReady',
    ]);
    for (const rule of rules) {
      expect(rule.type, rule.name).toBe('alerting');
      expect(['critical', 'warning'], rule.name).toContain(rule.labels.severity);
      expect(rule.state, rule.name).toBe('inactive');
    }
  });
});
