import { describe, expect, it } from 'vitest';
import { cliFixtures, waitUntil } from '../support/cli-fixtures.js';

const { start, migrated, insert, countRows } = cliFixtures();

describe('outboxer relay --engine v2', () => {
  it('publishes from a migrated table, then leaves on SIGTERM: no relay row left, exit 0', async () => {
    const { env, table, schema } = await migrated();
    const relay = start(['relay', '--engine', 'v2', '--lease-ms', '3000', '--publish-timeout-ms', '1000', '--poll-interval-ms', '50'], env);
    await relay.waitForOutput((out) => out.stderr.includes('"relay started"'), 'the relay to start');
    const ids = await insert(table, 30);
    await waitUntil(async () => (await countRows(table)) === 0, 'every row published', relay);
    await relay.waitForOutput((out) => ids.every((id) => out.stdout.includes(`id=${id}`)), 'a console line per message');
    const result = await relay.stop('SIGTERM');
    expect(result.code, result.stderr).toBe(0);
    const logs = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logs.find((line) => line.msg === 'outboxer relay starting')).toMatchObject({ engine: 'v2', leaseMs: 3000, publishTimeoutMs: 1000 });
    expect(logs.map((line) => line.msg)).toContain('relay joined the partition leases');
    expect(await countRows(`"${schema}".outbox_relays`)).toBe(0);
    expect(await countRows(`"${schema}".outbox_partitions`, 'owner IS NOT NULL')).toBe(0);
  });

  it('refuses a lease under 3 x the publish timeout, naming both flags', async () => {
    const { env } = await migrated();
    const relay = start(['relay', '--engine', 'v2', '--lease-ms', '5000', '--publish-timeout-ms', '2000'], env);
    const result = await relay.exited;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/at least 3 x publishTimeoutMs .*--lease-ms or OUTBOXER_LEASE_MS; --publish-timeout-ms or OUTBOXER_PUBLISH_TIMEOUT_MS/);
  });
});
