import { describe, expect, it } from 'vitest';
import { cliFixtures, expectUsageError, waitUntil } from '../support/cli-fixtures.js';
import { type CliProcess, runCli } from '../support/cli-runner.js';

const { pool, freshSchema, start, migrated, migratedAtV1, insert, countRows } = cliFixtures();

/** A v2 relay with a short lease (heartbeats every 2 s), so it sees a switch soon; console lines on stdout. */
const V2_RELAY = ['relay', '--engine', 'v2', '--publisher', 'console', '--poll-interval-ms', '50', '--lease-ms', '6000', '--publish-timeout-ms', '2000'];

interface StatusJson {
  pending: number;
  engine: {
    engine: 'v1' | 'v2';
    switching: boolean;
    partitionCount: number;
    generation: number;
    resizeTo: number | null;
    fenceUntil: string | null;
    lastV1ClaimFencedAt: string | null;
    relays: { id: string; name: string; leaving: boolean; partitions: number; leaseLeftMs: number; trouble: { reason: string; since: string } | null }[];
    unownedPartitions: number;
    lapsedPartitions: number;
  } | null;
}

async function status(env: NodeJS.ProcessEnv): Promise<StatusJson> {
  const result = await runCli(['status', '--json'], env);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as StatusJson;
}

async function migrate(args: readonly string[], env: NodeJS.ProcessEnv) {
  const result = await runCli(['migrate', ...args], env);
  expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(0);
  return result;
}

/** Waits until every row was published and the relay printed a console line for each id. */
async function drained(relay: CliProcess, table: string, ids: readonly string[]): Promise<void> {
  await waitUntil(async () => (await countRows(table)) === 0, 'every row to be published', relay);
  await relay.waitForOutput((out) => ids.every((id) => out.stdout.includes(`id=${id}`)), 'a console line per message');
}

/** A relay that holds partitions and never gives them back, written by hand: a resize waits for it until its timeout. */
async function stuckHolder(schema: string, partitions: number): Promise<void> {
  await pool.query(`INSERT INTO "${schema}".outbox_relays (relay_id, name, lease_ms, expires_at) VALUES ('00000000-0000-4000-8000-000000000001', 'stuck', 3600000, now() + interval '1 hour')`);
  await pool.query(`UPDATE "${schema}".outbox_partitions SET owner = '00000000-0000-4000-8000-000000000001', state = 'owned', epoch = epoch + 1 WHERE partition < $1`, [partitions]);
}

describe('outboxer CLI: engine v2', () => {
  it('a table migrate creates runs engine v2 at once; an existing v1 table keeps its engine, and migrate says how to switch', async () => {
    const { env } = freshSchema();
    const created = await migrate([], env);
    expect(created.stdout).toMatch(/is now at schema version \d+\n$/);
    expect((await status(env)).engine).toMatchObject({ engine: 'v2', switching: false, fenceUntil: null, lastV1ClaimFencedAt: null });
    expect((await migrate([], env)).stdout).toMatch(/up to date \(schema version \d+\); nothing to do\n$/);

    const { env: legacy } = await migratedAtV1();
    const kept = await migrate([], legacy);
    expect(kept.stdout).toMatch(/up to date \(schema version \d+\); nothing to do\n.* still runs engine v1 \(relays of this version run engine v2 only and wait on such a table\): switch it with `outboxer migrate --engine v2`, see docs\/upgrading-to-engine-v2.md\n$/);
    expect((await status(legacy)).engine?.engine).toBe('v1');
    // asked for an engine, migrate says what the switch did instead
    expect((await migrate(['--engine', 'v1'], legacy)).stdout).not.toContain('still runs engine v1');
  });

  it('a v2 relay on a v1 table warns and waits; migrate --engine v2 switches the table, status shows it, and the relay publishes', async () => {
    const { env, table } = await migratedAtV1();
    const before = await status(env);
    expect(before.engine).toMatchObject({ engine: 'v1', partitionCount: 64, generation: 1, resizeTo: null, fenceUntil: null, relays: [] });
    const ids = await insert(table, 12);
    const relay = start(V2_RELAY, env);
    await relay.waitForOutput((out) => out.stderr.includes('the outbox table runs engine v1'), 'the warning that the table runs engine v1');
    expect(await countRows(table)).toBe(12);

    const switched = await migrate(['--engine', 'v2'], env);
    expect(switched.stdout).toMatch(/up to date \(schema version \d+\); nothing to do\n.*switched to engine v2: scanned 12 pending rows \(0 leased by v1 relays, 0 backoffs given due_at\); v2 relays get partitions from \S+Z\n$/);
    expect(switched.stderr).toContain('outboxer migrate: scanned 12 pending rows');
    await drained(relay, table, ids);

    const after = await status(env);
    expect(after.engine).toMatchObject({ engine: 'v2', switching: false, partitionCount: 64, generation: 1, resizeTo: null, lastV1ClaimFencedAt: null });
    expect(after.engine?.relays).toHaveLength(1);
    const text = await runCli(['status'], env);
    expect(text.stdout).toMatch(/pending\s+0/);
    expect(text.stdout).toMatch(/engine v2: 64 partitions, generation 1\nfence: v2 grants open since \S+Z\nlast v1 claim fenced: never\n/);
    expect(text.stdout).toMatch(/relay\s+id\s+partitions\s+lease left/);

    const again = await migrate(['--engine', 'v2'], env);
    expect(again.stdout).toContain('already runs engine v2; nothing to do');
  });

  it('the switch back is refused (exit 1, with the code and the fix) while a v2 relay holds partitions, and done once it stopped', async () => {
    const { env, schema } = await migratedAtV1();
    await migrate(['--engine', 'v2'], env);
    const relay = start([...V2_RELAY, '--owner', 'relay-a'], env);
    await relay.waitForOutput((out) => out.stderr.includes('partitions acquired'), 'the relay to acquire partitions');
    await waitUntil(async () => (await status(env)).engine?.relays[0]?.partitions === 64, 'the relay to hold every partition', relay);

    const json = await status(env);
    expect(json.engine).toEqual({
      engine: 'v2', switching: false, partitionCount: 64, generation: 1, resizeTo: null, fenceUntil: expect.stringMatching(/Z$/) as string,
      lastV1ClaimFencedAt: null, relays: [{ id: expect.stringMatching(/^[0-9a-f-]{36}$/) as string, name: 'relay-a', leaving: false, partitions: 64, leaseLeftMs: expect.any(Number) as number, trouble: null }],
      unownedPartitions: 0, lapsedPartitions: 0,
    });
    expect(json.engine?.relays[0]?.leaseLeftMs).toBeLessThanOrEqual(6000);
    // status joined nothing: the relay is the only row
    expect((await pool.query(`SELECT name FROM "${schema}".outbox_relays`)).rows).toEqual([{ name: 'relay-a' }]);

    const refused = await runCli(['migrate', '--engine', 'v1'], env);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(/^outboxer migrate: OUTBOXER_ENGINE_ROLLBACK_REFUSED: cannot switch .* back to engine v1: 1 v2 relay\(s\) .* hold 64 partition\(s\) .*stop every v2 relay/m);
    expect((await status(env)).engine?.engine).toBe('v2');

    expect((await relay.stop('SIGTERM')).code).toBe(0);
    const back = await migrate(['--engine', 'v1'], env);
    expect(back.stdout).toContain('switched back to engine v1');
    expect((await status(env)).engine).toMatchObject({ engine: 'v1', fenceUntil: null, unownedPartitions: 64 });
  });

  it('migrate --partitions 16 resizes (nothing when equal), status shows 16, and a v2 relay drains everything after it', async () => {
    const { env, table } = await migratedAtV1();
    const resized = await migrate(['--partitions', '16', '--engine', 'v2'], env);
    expect(resized.stdout).toMatch(/resized from 64 to 16 partitions; generation 2\n.*switched to engine v2/);
    expect(resized.stderr).toContain('outboxer migrate: building the partition indexes for 16 partitions');
    expect(resized.stderr).toContain('dropped the old partition indexes');
    expect((await migrate(['--partitions', '16'], env)).stdout).toContain('already has 16 partitions; nothing to do');
    expect((await status(env)).engine).toMatchObject({ engine: 'v2', partitionCount: 16, generation: 2, resizeTo: null, unownedPartitions: 16 });

    const ids = await insert(table, 40);
    const relay = start(V2_RELAY, env);
    await drained(relay, table, ids);
    await waitUntil(async () => (await status(env)).engine?.relays[0]?.partitions === 16, 'the relay to hold the 16 partitions', relay);
  });

  it('a resize left waiting times out (exit 1), refuses another count, is shown by status, and --cancel-resize abandons it', async () => {
    const { env, schema } = await migrated();
    await migrate(['--engine', 'v2'], env);
    await stuckHolder(schema, 3);
    // and one whose lease ran out: not live, its partitions count as unowned (lapsed), and the resize does not wait for it
    await pool.query(`INSERT INTO "${schema}".outbox_relays (relay_id, name, lease_ms, expires_at) VALUES ('00000000-0000-4000-8000-000000000002', 'gone', 1000, now() - interval '1 minute')`);
    await pool.query(`UPDATE "${schema}".outbox_partitions SET owner = '00000000-0000-4000-8000-000000000002', state = 'owned' WHERE partition IN (10, 11)`);

    const timedOut = await runCli(['migrate', '--partitions', '8', '--resize-timeout-ms', '300'], env);
    expect(timedOut.code, timedOut.stderr).toBe(1);
    expect(timedOut.stderr).toMatch(/outboxer migrate: OUTBOXER_RESIZE_TIMEOUT: resize of .* to 8 partitions: 1 relay\(s\) still hold 3 partition\(s\) .*run it again to go on waiting, or cancel it/);
    const waiting = await status(env);
    expect(waiting.engine).toMatchObject({ partitionCount: 64, resizeTo: 8, unownedPartitions: 61, lapsedPartitions: 2 });
    expect(waiting.engine?.relays.map((relay) => [relay.name, relay.partitions])).toEqual([['stuck', 3]]);
    const text = await runCli(['status'], env);
    expect(text.stdout).toContain("resize: to 8 partitions, waiting (grants closed): 'outboxer migrate --partitions 8' finishes it, --cancel-resize abandons it");
    expect(text.stdout).toMatch(/stuck\s+00000000\s+3\s+\d+\.\d s\s+active\n/);
    expect(text.stdout).toContain('unowned partitions: 61 (2 still named by a relay whose lease ran out)');

    const other = await runCli(['migrate', '--partitions', '4'], env);
    expect(other.code, other.stderr).toBe(1);
    expect(other.stderr).toMatch(/OUTBOXER_RESIZE_IN_PROGRESS: .* has a resize to 8 partitions waiting, not to 4/);

    const cancelled = await migrate(['--cancel-resize'], env);
    expect(cancelled.stdout).toMatch(/cancelled the resize to 8 partitions; grants are open again \(dropped outbox_p8_due_idx, outbox_p8_idx\)/);
    expect((await status(env)).engine).toMatchObject({ partitionCount: 64, resizeTo: null });
    expect((await migrate(['--cancel-resize'], env)).stdout).toContain('has no resize waiting; nothing to cancel');
  });

  it('a switch that cannot get its lock gives up with OUTBOXER_LOCK_TIMEOUT after --lock-attempts tries (exit 1), changing nothing', async () => {
    const { env, table } = await migratedAtV1();
    const locker = await pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      const result = await runCli(['migrate', '--engine', 'v2', '--lock-timeout-ms', '50', '--lock-attempts', '2'], env);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain('outboxer migrate: a lock on the table was not granted in time (attempt 1); trying again\n');
      expect(result.stderr).toMatch(/outboxer migrate: OUTBOXER_LOCK_TIMEOUT: switch of .* to engine v2: a lock was not granted in 2 tries of 50 ms .*; from the CLI: --lock-timeout-ms and --lock-attempts\n$/);
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }
    expect((await status(env)).engine).toMatchObject({ engine: 'v1', switching: false });
  });

  it('status of a table without migration 8 still counts, and says the engine is unknown (JSON: null)', async () => {
    const { env, schema } = await migrated();
    await pool.query(`DELETE FROM "${schema}".outboxer_migrations WHERE version = 8`);
    const json = await status(env);
    expect(json).toMatchObject({ pending: 0, engine: null });
    const text = await runCli(['status'], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/oldest pending message: none\nengine: unknown: the table lacks the engine v2 migrations; run 'outboxer migrate'\npaused topics: none\npaused destinations: none\n$/);
  });

  it('refuses bad values and combinations with exit 2 before connecting, and reads no OUTBOXER_ENGINE on migrate', async () => {
    const { env } = freshSchema({ OUTBOXER_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/test' });
    const cases: [readonly string[], RegExp][] = [
      [['--partitions', '0'], /--partitions must be a whole number from 1 to 1024; got "0"$/m],
      [['--partitions', '1025'], /--partitions must be a whole number from 1 to 1024; got "1025"$/m],
      [['--partitions', 'many'], /--partitions must be a whole number/],
      [['--engine', 'v3'], /--engine must be one of v1, v2; got "v3"$/m],
      [['--partitions', '8', '--cancel-resize'], /give either --partitions .* or --cancel-resize, not both/],
      [['--resize-timeout-ms', '1000'], /--resize-timeout-ms applies only with --partitions/],
      [['--resize-timeout-ms', '0', '--partitions', '8'], /--resize-timeout-ms must be a whole number/],
      [['--lock-attempts', '3'], /--lock-timeout-ms and --lock-attempts apply only with --engine or --partitions/],
      [['--engine', 'v2', '--lock-timeout-ms', '60001'], /--lock-timeout-ms must be a whole number from 1 to 60000/],
    ];
    for (const [args, message] of cases) expectUsageError(await runCli(['migrate', ...args], env), message);
    expectUsageError(await runCli(['status', '--partitions', '8'], env), /option --partitions does not apply to 'status'/);
    expectUsageError(await runCli(['relay', '--cancel-resize'], env), /option --cancel-resize does not apply to 'relay'/);

    // A relay's environment does not switch the table when the same environment runs migrate.
    const { env: relayEnv } = await migrated({ OUTBOXER_ENGINE: 'v1' });
    expect((await migrate([], relayEnv)).stdout).toContain('up to date');
    expect((await status(relayEnv)).engine?.engine).toBe('v2');
  });
});
