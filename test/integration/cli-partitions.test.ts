import { describe, expect, it } from 'vitest';
import { cliFixtures, expectUsageError, waitUntil } from '../support/cli-fixtures.js';
import { type CliProcess, runCli } from '../support/cli-runner.js';

const { pool, freshSchema, start, migrated, insert, countRows } = cliFixtures();

/** A relay with a short lease (heartbeats every 2 s), so it sees a resize soon; console lines on stdout. */
const V2_RELAY = ['relay', '--engine', 'v2', '--publisher', 'console', '--poll-interval-ms', '50', '--lease-ms', '6000', '--publish-timeout-ms', '2000'];

interface StatusJson {
  pending: number;
  engine: {
    partitionCount: number;
    generation: number;
    resizeTo: number | null;
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
  await pool.query(
    `INSERT INTO "${schema}".outbox_relays (relay_id, name, lease_ms, expires_at) VALUES ('00000000-0000-4000-8000-000000000001', 'stuck', 3600000, now() + interval '1 hour')`,
  );
  await pool.query(
    `UPDATE "${schema}".outbox_partitions SET owner = '00000000-0000-4000-8000-000000000001', state = 'owned', epoch = epoch + 1 WHERE partition < $1`,
    [partitions],
  );
}

describe('outboxer CLI: partitions', () => {
  it('migrate --partitions 16 resizes (nothing when equal), status shows 16, and a v2 relay drains everything after it', async () => {
    const { env, table } = await migrated();
    const resized = await migrate(['--partitions', '16'], env);
    expect(resized.stdout).toMatch(/resized from 64 to 16 partitions; generation 2\n$/);
    expect(resized.stderr).toContain('outboxer migrate: building the partition indexes for 16 partitions');
    expect(resized.stderr).toContain('dropped the old partition indexes');
    expect((await migrate(['--partitions', '16'], env)).stdout).toContain('already has 16 partitions; nothing to do');
    expect((await status(env)).engine).toMatchObject({ partitionCount: 16, generation: 2, resizeTo: null, unownedPartitions: 16 });

    const ids = await insert(table, 40);
    const relay = start(V2_RELAY, env);
    await drained(relay, table, ids);
    await waitUntil(async () => (await status(env)).engine?.relays[0]?.partitions === 16, 'the relay to hold the 16 partitions', relay);
  });

  it('a resize left waiting times out (exit 1), refuses another count, is shown by status, and --cancel-resize abandons it', async () => {
    const { env, schema } = await migrated();
    await stuckHolder(schema, 3);
    // and one whose lease ran out: not live, its partitions count as unowned (lapsed), and the resize does not wait for it
    await pool.query(
      `INSERT INTO "${schema}".outbox_relays (relay_id, name, lease_ms, expires_at) VALUES ('00000000-0000-4000-8000-000000000002', 'gone', 1000, now() - interval '1 minute')`,
    );
    await pool.query(`UPDATE "${schema}".outbox_partitions SET owner = '00000000-0000-4000-8000-000000000002', state = 'owned' WHERE partition IN (10, 11)`);

    const timedOut = await runCli(['migrate', '--partitions', '8', '--resize-timeout-ms', '300'], env);
    expect(timedOut.code, timedOut.stderr).toBe(1);
    expect(timedOut.stderr).toMatch(
      /outboxer migrate: OUTBOXER_RESIZE_TIMEOUT: resize of .* to 8 partitions: 1 relay\(s\) still hold 3 partition\(s\) .*run it again to go on waiting, or cancel it/,
    );
    const waiting = await status(env);
    expect(waiting.engine).toMatchObject({ partitionCount: 64, resizeTo: 8, unownedPartitions: 61, lapsedPartitions: 2 });
    expect(waiting.engine?.relays.map((relay) => [relay.name, relay.partitions])).toEqual([['stuck', 3]]);
    const text = await runCli(['status'], env);
    expect(text.stdout).toContain(
      "resize: to 8 partitions, waiting (grants closed): 'outboxer migrate --partitions 8' finishes it, --cancel-resize abandons it",
    );
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

  it('status of a table without migration 8 still counts, and says the engine is unknown (JSON: null)', async () => {
    const { env, schema } = await migrated();
    await pool.query(`DELETE FROM "${schema}".outboxer_migrations WHERE version = 8`);
    const json = await status(env);
    expect(json).toMatchObject({ pending: 0, engine: null });
    const text = await runCli(['status'], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /oldest pending message: none\nengine: unknown: the table lacks migrations; run 'outboxer migrate'\npaused topics: none\npaused destinations: none\n$/,
    );
  });

  it('refuses bad values and combinations with exit 2 before connecting, and --engine on migrate', async () => {
    const { env } = freshSchema({ OUTBOXER_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/test' });
    const cases: [readonly string[], RegExp][] = [
      [['--partitions', '0'], /--partitions must be a whole number from 1 to 1024; got "0"$/m],
      [['--partitions', '1025'], /--partitions must be a whole number from 1 to 1024; got "1025"$/m],
      [['--partitions', 'many'], /--partitions must be a whole number/],
      [['--engine', 'v2'], /option --engine does not apply to 'migrate'/],
      [['--partitions', '8', '--cancel-resize'], /give either --partitions .* or --cancel-resize, not both/],
      [['--resize-timeout-ms', '1000'], /--resize-timeout-ms applies only with --partitions/],
      [['--resize-timeout-ms', '0', '--partitions', '8'], /--resize-timeout-ms must be a whole number/],
      [['--lock-attempts', '3'], /--lock-timeout-ms and --lock-attempts apply only with --partitions/],
      [['--partitions', '8', '--lock-timeout-ms', '60001'], /--lock-timeout-ms must be a whole number from 1 to 60000/],
    ];
    for (const [args, message] of cases) expectUsageError(await runCli(['migrate', ...args], env), message);
    expectUsageError(await runCli(['status', '--partitions', '8'], env), /option --partitions does not apply to 'status'/);
    expectUsageError(await runCli(['relay', '--cancel-resize'], env), /option --cancel-resize does not apply to 'relay'/);

    // A relay's environment is not read by migrate: OUTBOXER_ENGINE=v1 there changes nothing.
    const { env: relayEnv } = await migrated({ OUTBOXER_ENGINE: 'v1' });
    expect((await migrate([], relayEnv)).stdout).toContain('up to date');
  });
});
