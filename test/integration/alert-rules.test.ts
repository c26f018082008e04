import { execFile } from 'node:child_process';
import { access, constants, readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const rules = 'docs/alerts/outboxer-rules.yml';
const tests = 'docs/alerts/outboxer-rules.test.yml';
const promtool = process.env.OUTBOXER_TEST_PROMTOOL ?? '/usr/bin/promtool';

/** promtool from Debian's `prometheus` package (.ci/services installs it); missing is a failure, never a skip. */
async function runPromtool(args: string[]): Promise<{ stdout: string; stderr: string }> {
  try {
    await access(promtool, constants.X_OK);
  } catch {
    throw new Error(`${promtool} is missing: install Debian's prometheus package (bash .ci/services does), or set OUTBOXER_TEST_PROMTOOL`);
  }
  try {
    return await run(promtool, args, { cwd: root, timeout: 60_000 });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`promtool ${args.join(' ')} failed:\n${stdout}${stderr}`, { cause: error });
  }
}

/** Each `- alert:` block of the rule file, by name, as text. */
async function alertBlocks(): Promise<Map<string, string>> {
  const text = await readFile(new URL(rules, `file://${root}`), 'utf8');
  const blocks = new Map<string, string>();
  for (const block of text.split(/^ {6}- alert: /m).slice(1)) {
    const name = block.slice(0, block.indexOf('\n')).trim();
    blocks.set(name, block);
  }
  return blocks;
}

describe('alert rules shipped in docs/alerts', () => {
  it('pass `promtool check rules`', async () => {
    const { stdout } = await runPromtool(['check', 'rules', rules]);
    expect(stdout).toMatch(/SUCCESS: 6 rules found/);
  });

  it('pass their unit tests with `promtool test rules`', async () => {
    const { stdout } = await runPromtool(['test', 'rules', tests]);
    expect(stdout).toContain('SUCCESS');
  });

  it('cover the five conditions of the issue, each with a severity, a summary and a runbook', async () => {
    const blocks = await alertBlocks();
    expect([...blocks.keys()].sort()).toEqual([
      'OutboxerDeadMessagesGrowing',
      'OutboxerNoRelayAlive',
      'OutboxerOldestPendingAgeHigh',
      'OutboxerOldestPendingOverSLO',
      'OutboxerPartitionUnowned',
      'OutboxerRelayNotReady',
    ]);
    for (const [name, block] of blocks) {
      expect(block, name).toMatch(/^ {10}severity: (critical|warning)$/m);
      expect(block, name).toMatch(/^ {10}summary: ".+"$/m);
      expect(block, name).toMatch(/^ {10}runbook: ".{40,}"$/m);
    }
    expect(blocks.get('OutboxerPartitionUnowned')).toContain('max by (job) (outboxer_partitions) - sum by (job) (outboxer_partitions_owned) > 0');
    expect(blocks.get('OutboxerRelayNotReady')).toContain('outboxer_relay_ready == 0');
  });

  it('have a unit test in which each alert fires and one in which it stays silent', async () => {
    const names = [...(await alertBlocks()).keys()];
    const lines = (await readFile(new URL(tests, `file://${root}`), 'utf8')).split('\n');
    const expectations = new Map<string, { fires: boolean; silent: boolean }>(names.map((name) => [name, { fires: false, silent: false }]));
    lines.forEach((line, i) => {
      const name = /^\s+alertname: (\w+)$/.exec(line)?.[1];
      const seen = name === undefined ? undefined : expectations.get(name);
      if (seen === undefined) return;
      const next = lines[i + 1]?.trim();
      if (next === 'exp_alerts: []') seen.silent = true;
      else if (next === 'exp_alerts:') seen.fires = true;
    });
    expect(Object.fromEntries(expectations)).toEqual(Object.fromEntries(names.map((name) => [name, { fires: true, silent: true }])));
  });
});
