import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, PROMPT_EXIT_MS, startScript } from '../support/cli-runner.js';
import { freshDatabase, freshVhost } from '../support/fresh-services.js';
import { waitFor } from '../support/wait-for.js';

/** examples/ops-server.ts is the embedded use of docs/http-api.md: here it runs as a user runs it, on a database and a vhost of its own. */
describe('docs/http-api.md embedded example', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('serves health, metrics and the admin API next to its relay, and SIGTERM ends it promptly', async () => {
    const [db, host] = await Promise.all([freshDatabase(), freshVhost()]);
    cleanups.push(
      () => db.drop(),
      () => host.delete(),
    );
    const token = randomBytes(24).toString('hex');
    const service = startScript('examples/ops-server.ts', [], cliEnv({ DATABASE_URL: db.url, AMQP_URL: host.url, OUTBOXER_ADMIN_TOKEN: token, OPS_PORT: '0' }));
    cleanups.push(async () => {
      if (service.running) await service.stop('SIGKILL');
    });
    await service.waitForOutput((out) => /^http:\/\/\S+\n/.test(out.stdout), 'the server URL', 60_000);
    const url = service.stdout.trim();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await waitFor(async () => (await fetch(`${url}/health/ready`)).status === 200, { what: `ready\n${service.stderr}` });
    await waitFor(async () => /^outboxer_relay_ready 1$/m.test(await (await fetch(`${url}/metrics`)).text()), { what: 'the metrics to say ready' });
    expect(await (await fetch(`${url}/api/info`)).json()).toMatchObject({ mutations: 'enabled', readRequiresToken: false });
    const changed = await fetch(`${url}/api/dead/purge`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: '{"all":true}',
    });
    expect(await changed.json()).toEqual({ purged: 0 });

    service.child.kill('SIGTERM');
    const signalled = performance.now();
    const exit = await service.waitForExit(30_000);
    expect({ code: exit.code, signal: exit.signal, stderr: exit.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(performance.now() - signalled).toBeLessThan(PROMPT_EXIT_MS);
    await expect(fetch(`${url}/health/live`)).rejects.toThrow();
  });
});
