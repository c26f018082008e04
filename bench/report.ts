import type { Conditions } from './measure/conditions.js';
import type { Metric, ScenarioResult } from './scenarios/scenario.js';

export interface BenchResult {
  readonly size: string;
  readonly overrides: Record<string, string>;
  readonly conditions: Conditions;
  readonly scenarios: ScenarioResult[];
  readonly errors: { scenario: string; error: string }[];
}

const format = (value: Metric | undefined): string => {
  if (value === undefined || value === null) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? value.toLocaleString('en-US', { maximumFractionDigits: 2 }) : String(value);
  return String(value);
};

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

function scenarioSection(scenario: ScenarioResult): string {
  const parts = [`### (${scenario.id}) ${scenario.title}`, ''];
  parts.push(
    `Settings: ${Object.entries(scenario.settings)
      .map(([key, value]) => `${key}=${format(value)}`)
      .join(', ')}${scenario.seconds === undefined ? '' : `; scenario took ${Math.round(scenario.seconds)} s`}`,
    '',
  );
  const metrics = [...new Set(scenario.rows.flatMap((row) => Object.keys(row.metrics)))];
  const hasBroker = scenario.rows.some((row) => row.broker !== undefined);
  const header = ['contender', ...(hasBroker ? ['broker'] : []), ...metrics];
  parts.push(
    table(
      header,
      scenario.rows.map((row) => [row.contender, ...(hasBroker ? [row.broker ?? ''] : []), ...metrics.map((m) => format(row.metrics[m]))]),
    ),
    '',
  );
  if (scenario.targets.length > 0) {
    parts.push(
      table(
        ['target', 'goal', 'measured', 'met'],
        scenario.targets.map((t) => [t.name, t.goal, format(t.value), t.met === null ? 'n/a' : t.met ? 'yes' : '**no**']),
      ),
      '',
    );
  }
  const failed = scenario.checks.filter((check) => !check.ok);
  parts.push(
    failed.length === 0
      ? `Sanity checks: all ${scenario.checks.length} passed.`
      : `Sanity checks FAILED: ${failed.map((c) => `${c.name} (${c.detail})`).join('; ')}`,
    '',
  );
  for (const note of scenario.notes) parts.push(`- ${note}`);
  return parts.join('\n');
}

/** The Markdown report: conditions first, then one section per scenario. */
export function renderMarkdown(result: BenchResult): string {
  const c = result.conditions;
  const overrides = Object.entries(result.overrides);
  const lines = [
    `## Run ${c.date} (size: ${result.size}${overrides.length > 0 ? `, overrides: ${overrides.map(([k, v]) => `${k}=${v}`).join(', ')}` : ''})`,
    '',
    `Machine: ${c.cpus} CPUs (${c.cpuModel}), ${c.memoryGiB} GiB RAM, load average at start ${c.loadAverageAtStart} (shared with other test suites). ` +
      `Node ${c.node}; PostgreSQL ${c.postgres} (${Object.entries(c.postgresSettings)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')}); RabbitMQ ${c.rabbitmq}; NATS ${c.nats}; ` +
      `${c.mariadb === undefined ? '' : `MariaDB ${c.mariadb}; `}${c.sqlite === undefined ? '' : `SQLite ${c.sqlite}; `}outboxer commit ${c.commit}.`,
    '',
  ];
  for (const scenario of result.scenarios) lines.push(scenarioSection(scenario), '');
  for (const error of result.errors) lines.push(`**Scenario ${error.scenario} failed to run:** ${error.error}`, '');
  return lines.join('\n');
}
