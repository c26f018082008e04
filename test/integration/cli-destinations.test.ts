import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/core/redact.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { cliFixtures, waitUntil } from '../support/cli-fixtures.js';
import { type CliResult, runCli } from '../support/cli-runner.js';
import { services } from '../support/services.js';

const { pool, start, migrated } = cliFixtures();

/** The one audit line a change writes on stderr. */
function auditLine(result: CliResult): Record<string, unknown> {
  const lines = result.stderr.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  return JSON.parse(lines[0] ?? '') as Record<string, unknown>;
}

const pausesOf = async (schema: string) =>
  (await pool.query(`SELECT destination, reason, paused_at FROM "${schema}".outbox_paused_destinations ORDER BY paused_at, destination`)).rows as {
    destination: string;
    reason: string;
    paused_at: Date;
  }[];

/** The `sh` block of docs/fan-out.md that this file runs, one command per line, split as a shell splits it. */
function docCommands(): string[][] {
  const doc = readFileSync(new URL('../../docs/fan-out.md', import.meta.url), 'utf8');
  const block = /<!-- run by test\/integration\/cli-destinations\.test\.ts[^>]*-->\n```sh\n([^`]*)```/.exec(doc)?.[1];
  if (block === undefined) throw new Error('docs/fan-out.md has no sh block run by this test');
  return block
    .trim()
    .split('\n')
    .map((line) => [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? ''));
}

describe('outboxer CLI: destinations', () => {
  it('runs the commands docs/fan-out.md shows, as shown', async () => {
    const { env, schema } = await migrated();
    const commands = docCommands();
    expect(commands.map((args) => args.slice(0, 3).join(' '))).toEqual([
      'outboxer destinations pause',
      'outboxer destinations list',
      'outboxer destinations resume',
    ]);
    const outputs: string[] = [];
    for (const [program, ...args] of commands) {
      expect(program).toBe('outboxer');
      const result = await runCli(args, env);
      expect(result.code, result.stderr).toBe(0);
      outputs.push(result.stdout);
    }
    expect(outputs[0]).toMatch(/^destination partner paused for every relay/);
    expect(outputs[1]).toMatch(/\npartner\s+\(all topics\)\s+\S+Z\s+partner maintenance, INC-12\n/);
    expect(outputs[2]).toMatch(/^destination partner resumed/);
    expect(await pausesOf(schema)).toEqual([]);
  });

  it('pauses, lists (table and JSON), pauses again, resumes and resumes again, each change with an audit line; status shows the pauses', async () => {
    const { env, schema } = await migrated();
    const run = async (args: string[]) => {
      const result = await runCli(args, env);
      expect(result.code, result.stderr).toBe(0);
      return result;
    };
    const audit = { audit: true, user: userInfo().username, table: `${schema}.outbox`, database: redactUrl(services.postgresUrl) };

    expect((await run(['destinations', 'list'])).stdout).toBe(`no paused destinations in ${schema}.outbox\n`);
    expect(JSON.parse((await run(['status', '--json'])).stdout)).toMatchObject({ pausedDestinations: [] });

    const paused = await run(['destinations', 'pause', 'partner', '--reason', ' partner maintenance, INC-12 ']);
    expect(paused.stdout).toBe(
      'destination partner paused for every relay (relays hold its messages, every topic, within about 5 s; the other destinations keep flowing)\n',
    );
    expect(auditLine(paused)).toMatchObject({
      ...audit,
      action: 'destinations.pause',
      destination: 'partner',
      reason: 'partner maintenance, INC-12',
      changed: 1,
      msg: 'destination paused',
    });
    await run(['destinations', 'pause', 'default']);
    const stored = await pausesOf(schema);
    expect(stored.map(({ destination, reason }) => ({ destination, reason }))).toEqual([
      { destination: 'partner', reason: 'partner maintenance, INC-12' },
      { destination: 'default', reason: '' },
    ]);
    const [first, second] = stored.map((pause) => pause.paused_at.toISOString());

    const table = await run(['destinations', 'list']);
    expect(table.stdout.split('\n')).toEqual([
      expect.stringMatching(/^destination\s+topic\s+paused at\s+reason$/),
      expect.stringMatching(new RegExp(`^partner\\s+\\(all topics\\)\\s+${first}\\s+partner maintenance, INC-12$`)),
      expect.stringMatching(new RegExp(`^default\\s+\\(all topics\\)\\s+${second}\\s+-$`)),
      `2 destination(s) paused by an operator: every relay of ${schema}.outbox holds their messages, every topic, until 'outboxer destinations resume <name>'`,
      '',
    ]);
    const json = await run(['destinations', 'list', '--json']);
    const listed = [
      { destination: 'partner', reason: 'partner maintenance, INC-12', pausedAt: first },
      { destination: 'default', reason: '', pausedAt: second },
    ];
    expect(JSON.parse(json.stdout)).toEqual(listed);

    // `status` shows them after the paused topics, in both forms
    expect(JSON.parse((await run(['status', '--json'])).stdout)).toMatchObject({ pausedTopics: [], pausedDestinations: listed });
    const status = (await run(['status'])).stdout;
    expect(status).toContain('paused topics: none\npaused destinations:\n');
    expect(status).toMatch(new RegExp(`\\npartner\\s+\\(all topics\\)\\s+${first}\\s+partner maintenance, INC-12\\n`));

    // Paused already: exit 0, the first reason and time are kept and shown.
    const again = await run(['destinations', 'pause', 'partner', '--reason', 'another reason']);
    expect(again.stdout).toBe(`destination partner was already paused since ${first}: partner maintenance, INC-12\n`);
    expect(auditLine(again)).toMatchObject({
      ...audit,
      action: 'destinations.pause',
      destination: 'partner',
      changed: 0,
      msg: 'destination was paused already',
    });

    const resumed = await run(['destinations', 'resume', 'partner']);
    expect(resumed.stdout).toBe(
      'destination partner resumed: its held messages publish in key order as their holds run out (docs/fan-out.md, Pausing a destination)\n',
    );
    expect(auditLine(resumed)).toMatchObject({ ...audit, action: 'destinations.resume', destination: 'partner', changed: 1, msg: 'destination resumed' });
    const notPaused = await run(['destinations', 'resume', 'partner']);
    expect(notPaused.stdout).toBe('destination partner was not paused\n');
    expect(auditLine(notPaused)).toMatchObject({ ...audit, action: 'destinations.resume', changed: 0, msg: 'destination was not paused' });
    expect((await pausesOf(schema)).map((pause) => pause.destination)).toEqual(['default']);
  });

  it('refuses a bad destination or reason with exit 2 and the code the store gives, before writing anything', async () => {
    const { env, schema } = await migrated();
    const cases: [string[], RegExp][] = [
      [['destinations', 'pause'], /^outboxer: 'destinations pause' needs a destination\n/],
      [['destinations', 'pause', 'partner', 'other'], /^outboxer: unexpected argument 'other' for 'destinations pause'\n/],
      [
        ['destinations', 'pause', 'partner.eu'],
        /^outboxer: OUTBOXER_INVALID_DESTINATION: a paused destination must be a destination's name, or "default" for the relay's own publisher: destination "partner\.eu" is invalid/,
      ],
      [['destinations', 'resume', 'x'.repeat(65)], /^outboxer: OUTBOXER_INVALID_DESTINATION: /],
      [
        ['destinations', 'pause', 'partner', '--reason', 'two\nlines'],
        /^outboxer: OUTBOXER_INVALID_OPTION: the reason for pausing destination "partner" must be a string of at most 500 bytes/,
      ],
      [['destinations', 'resume', 'partner', '--reason', 'why'], /^outboxer: option --reason does not apply to 'destinations resume'\n/],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args, env)));
    for (const [index, [args, message]] of cases.entries()) {
      const result = results[index] as CliResult;
      expect(result.code, result.stderr).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(message);
      expect(result.stderr).toContain(`Usage: outboxer ${args[0]} ${args[1]}`);
      expect(result.stderr).not.toContain('"audit"');
    }
    expect(await pausesOf(schema)).toEqual([]);

    // The store's own refusal keeps its code too: a table allows 1000 pauses.
    await pool.query(`INSERT INTO "${schema}".outbox_paused_destinations (destination) SELECT 'partner-' || n FROM generate_series(1, 1000) AS n`);
    const full = await runCli(['destinations', 'pause', 'partner'], env);
    expect(full.code, full.stderr).toBe(2);
    expect(full.stderr).toMatch(
      /^outboxer: OUTBOXER_INVALID_OPTION: cannot pause destination "partner": 1000 destinations are paused already, the most a table allows \(1000\); resume some first\n/,
    );
  });

  it('a table without the list of paused destinations fails with exit 1 and says to migrate; status shows none', async () => {
    const { env, schema } = await migrated();
    await pool.query(`DROP TABLE "${schema}".outbox_paused_destinations`);
    const result = await runCli(['destinations', 'list'], env);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(
        `^outboxer destinations list: OUTBOXER_NOT_MIGRATED: outbox table "${schema}"\\."outbox" is not migrated \\(it has no list of paused destinations: schema version 13 adds it`,
      ),
    );
    const status = await runCli(['status', '--json'], env);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ pausedDestinations: [] });
    // the relays' reader reads it as no pause, rather than stopping the relay
    expect(await new PostgresOutboxStore(fromPgPool(pool), { schema }).reader.destinationPauses?.()).toEqual([]);
  });

  it('a running relay holds the messages of `default` paused with the CLI, uncounted, and publishes them in key order once it is resumed', async () => {
    const { env, table } = await migrated();
    // R = min(5 s, lease / 3) = 1 s: the relay reads the lists of pauses every second; holds last at most 0.4 s.
    const relayArgs = [
      '--poll-interval-ms',
      '50',
      '--lease-ms',
      '3000',
      '--publish-timeout-ms',
      '1000',
      '--error-backoff-ms',
      '100',
      '--max-error-backoff-ms',
      '400',
    ];
    const relay = start(['relay', ...relayArgs], env);
    await relay.waitForOutput((out) => out.stderr.includes('"relay started"'), 'the relay to start');

    const paused = await runCli(['destinations', 'pause', 'default', '--reason', 'broker maintenance'], env);
    expect(paused.code, paused.stderr).toBe(0);
    await relay.waitForOutput((out) => out.stderr.includes('destination paused by an operator'), 'the relay to read the pause');

    const insert = async (topic: string, key: string) =>
      (
        (await pool.query(`INSERT INTO ${table} (topic, key, type, payload) VALUES ($1, $2, 'order.x', '{}') RETURNING id::text AS id`, [topic, key]))
          .rows[0] as { id: string }
      ).id;
    const held = [await insert('orders.created', 'order-1'), await insert('orders.paid', 'order-1'), await insert('audit.log', 'order-2')];
    const rows = async () =>
      (await pool.query(`SELECT state, attempts, last_error FROM ${table} WHERE id = ANY($1::uuid[]) ORDER BY seq`, [held])).rows as {
        state: string;
        attempts: number;
        last_error: string | null;
      }[];
    await waitUntil(async () => (await rows()).every((row) => row.last_error !== null), 'every topic of the destination to be held', relay);
    for (const row of await rows()) {
      expect(row.state).toBe('pending');
      expect(row.attempts).toBe(0);
      expect(row.last_error).toMatch(/^paused by an operator: broker maintenance$|^waits for an earlier message of its key/);
    }
    expect(held.some((id) => relay.stdout.includes(`id=${id}`))).toBe(false);

    const resumed = await runCli(['destinations', 'resume', 'default'], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    await relay.waitForOutput((out) => out.stderr.includes('destination resumed by an operator'), 'the relay to read the resume');
    await waitUntil(async () => (await rows()).length === 0, 'the held messages to publish after the resume', relay);
    await relay.waitForOutput((out) => held.every((id) => out.stdout.includes(`id=${id}`)), 'the console line of each held message');
    // key order: order-1's two messages in the order they were stored
    expect(relay.stdout.indexOf(`id=${held[0]}`)).toBeLessThan(relay.stdout.indexOf(`id=${held[1]}`));
    expect((await relay.stop('SIGTERM')).code).toBe(0);
  });
});
