import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { cliFixtures, waitUntil } from '../support/cli-fixtures.js';
import { fileURLToPath } from 'node:url';
import { cliEnv, CliProcess, runCli } from '../support/cli-runner.js';

const { start, migrated, insert, countRows } = cliFixtures();
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The URL the daemon's HTTP server listens on, from its log line. */
async function listeningUrl(relay: CliProcess): Promise<string> {
  await relay.waitForOutput((out) => out.stderr.includes('"ops http server listening"'), 'the HTTP server to listen');
  const line = relay.stderr.split('\n').find((text) => text.includes('"ops http server listening"')) ?? '';
  return (JSON.parse(line) as { url: string }).url;
}

const metricValue = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);

describe('outboxer relay --http-port', () => {
  it('serves /health/ready and /metrics while it publishes, takes changes with the token, never shows it, and closes after the relay on SIGTERM', async () => {
    const token = `TOKEN${randomBytes(16).toString('hex')}`;
    const { env, table } = await migrated();
    const relay = start(['relay', '--poll-interval-ms', '50', '--http-port', '0', '--admin-token', token, '--log-level', 'debug'], env);
    const url = await listeningUrl(relay);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await waitUntil(async () => (await fetch(`${url}/health/ready`)).status === 200, 'ready', relay);
    expect(await (await fetch(`${url}/health/ready`)).json()).toEqual({ status: 'ready' });

    const ids = await insert(table, 5);
    await waitUntil(async () => (await countRows(table)) === 0, 'the rows to be published', relay);
    const metrics = await fetch(`${url}/metrics`);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await metrics.text();
    expect(metricValue(text, 'outboxer_published_total\\{destination="default"\\}')).toBe(5);
    expect(metricValue(text, 'outboxer_relay_ready')).toBe(1);
    expect(metricValue(text, 'outboxer_partitions_owned')).toBe(64);
    await relay.waitForOutput((out) => ids.every((id) => out.stdout.includes(`id=${id}`)), 'a console line per message');

    const info = (await (await fetch(`${url}/api/info`)).json()) as Record<string, unknown>;
    expect(info).toMatchObject({ mutations: 'enabled', readRequiresToken: false, payloads: 'hidden' });
    const refused = await fetch(`${url}/api/dead/retry`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"all":true}' });
    expect(refused.status).toBe(401);
    const retried = await fetch(`${url}/api/dead/retry`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: '{"all":true}',
    });
    expect(await retried.json()).toEqual({ retried: 0 });

    const result = await relay.stop('SIGTERM');
    expect(result.code, result.stderr).toBe(0);
    const logs = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logs.find((line) => line.msg === 'outboxer relay starting')).toMatchObject({ http: url });
    expect(logs.find((line) => line.msg === 'dead messages moved back to pending')).toMatchObject({
      audit: true,
      action: 'dead.retry',
      requested: 'all',
      changed: 0,
    });
    const messages = logs.map((line) => line.msg);
    expect(messages.indexOf('relay stopped')).toBeLessThan(messages.indexOf('outboxer relay exited'));
    expect(`${result.stdout}${result.stderr}`).not.toContain(token);
    await expect(fetch(`${url}/health/live`)).rejects.toThrow();
  });

  it('takes its settings from the environment, token included, and never shows the token', async () => {
    const token = `ENVTOKEN${randomBytes(16).toString('hex')}`;
    const { env } = await migrated({ OUTBOXER_HTTP_PORT: '0', OUTBOXER_HTTP_HOST: '127.0.0.1', OUTBOXER_ADMIN_TOKEN: token, OUTBOXER_LOG_LEVEL: 'debug' });
    const relay = start(['relay', '--poll-interval-ms', '50'], env);
    const url = await listeningUrl(relay);
    const answer = await fetch(`${url}/api/topics/pause`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: '{"topic":"orders.created"}',
    });
    expect(await answer.json()).toEqual({ paused: true });
    const result = await relay.stop('SIGTERM');
    expect(result.code, result.stderr).toBe(0);
    expect(`${result.stdout}${result.stderr}`).not.toContain(token);
    expect(result.stderr).toContain('"action":"topics.pause"');
  });

  it('a usage error never echoes the token, from the flag or the variable', async () => {
    const token = `USAGETOKEN${randomBytes(16).toString('hex')}`;
    const results = await Promise.all([
      runCli(['relay', '--http-port', '0', '--admin-token', token, '--http-host', 'not valid'], cliEnv({ OUTBOXER_DATABASE_URL: 'postgres://127.0.0.1:1/x' })),
      runCli(['relay', '--admin-token', token], cliEnv({ OUTBOXER_DATABASE_URL: 'postgres://127.0.0.1:1/x' })),
      runCli(['relay', '--http-port', '0', '--lanes', '99'], cliEnv({ OUTBOXER_DATABASE_URL: 'postgres://127.0.0.1:1/x', OUTBOXER_ADMIN_TOKEN: token })),
      runCli(['relay', '--http-port', '0', '--admin-token', `${token} with spaces`], cliEnv({ OUTBOXER_DATABASE_URL: 'postgres://127.0.0.1:1/x' })),
    ]);
    for (const result of results) {
      expect(result.code, result.stderr).toBe(2);
      expect(`${result.stdout}${result.stderr}`).not.toContain(token);
    }
  });

  it('a port it cannot take ends it with exit 1 and one line, before the relay starts', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const { env } = await migrated();
      const relay = start(['relay', '--http-port', String(port)], env);
      const result = await relay.waitForExit();
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr.trim().split('\n').at(-1)).toMatch(
        /^outboxer relay: EADDRINUSE: .*address already in use.*; another process listens on that port: choose another --http-port$/,
      );
      expect(result.stderr).not.toContain('relay started');
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('without prom-client installed, it serves the rest and /metrics answers 501 saying what to install; a warning says it too', async () => {
    const { env, table } = await migrated();
    // node --import tsx --import <hook> main.ts: prom-client cannot be resolved, as where it was never installed.
    const relay = new CliProcess(
      ['--import', 'tsx', '--import', './test/support/hide-prom-client.ts', 'src/ops/cli/main.ts', 'relay', '--poll-interval-ms', '50', '--http-port', '0'],
      env,
      { command: process.execPath, cwd: ROOT },
    );
    try {
      const url = await listeningUrl(relay);
      const metrics = await fetch(`${url}/metrics`);
      expect(metrics.status).toBe(501);
      expect(metrics.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await metrics.json()).toEqual({
        error: {
          code: 'OUTBOXER_NOT_SUPPORTED',
          message: 'prom-client is not installed, so this relay has no metrics: install it next to outboxer (npm install prom-client) and restart the relay',
        },
      });
      await waitUntil(async () => (await fetch(`${url}/health/ready`)).status === 200, 'ready', relay);
      const [id] = await insert(table, 1);
      await waitUntil(async () => (await countRows(table)) === 0, 'the row to be published', relay);
      expect(relay.stdout).toContain(`id=${id}`);
      const result = await relay.stop('SIGTERM');
      expect(result.code, result.stderr).toBe(0);
      const warning = result.stderr
        .split('\n')
        .filter((line) => line.includes('prom-client is not installed'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(warning).toEqual([expect.objectContaining({ level: 'warn', msg: expect.stringContaining('npm install prom-client') })]);
    } finally {
      if (relay.running) await relay.stop('SIGKILL');
    }
  });
});
