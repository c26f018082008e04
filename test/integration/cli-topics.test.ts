import { randomUUID } from 'node:crypto';
import { userInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/core/redact.js';
import { operatorReason, relayHoldReason } from '../../src/core/topic-pauses.js';
import { cliFixtures, waitUntil } from '../support/cli-fixtures.js';
import { type CliResult, runCli } from '../support/cli-runner.js';
import { services } from '../support/services.js';

const { pool, start, migrated, enqueue } = cliFixtures();

/** The test database's URL with a password in it (a canary when it has none: the local server trusts 127.0.0.1). */
function urlWithPassword(): { url: string; password: string } {
  const url = new URL(services.postgresUrl);
  if (url.password === '') url.password = `CANARY${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  return { url: url.toString(), password: decodeURIComponent(url.password) };
}

/** The one audit line a change writes on stderr. */
function auditLine(result: CliResult): Record<string, unknown> {
  const lines = result.stderr.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  return JSON.parse(lines[0] ?? '') as Record<string, unknown>;
}

const pausesOf = async (schema: string) =>
  (await pool.query(`SELECT topic, reason, paused_at FROM "${schema}".outbox_paused_topics ORDER BY paused_at, topic`)).rows as {
    topic: string;
    reason: string;
    paused_at: Date;
  }[];

describe('outboxer CLI: topics', () => {
  it('pauses, lists (table and JSON), pauses again, resumes and resumes again, each change with an audit line and no password', async () => {
    const { url, password } = urlWithPassword();
    const { env, schema } = await migrated({ OUTBOXER_DATABASE_URL: url });
    const results: CliResult[] = [];
    const run = async (args: string[]) => {
      const result = await runCli(args, env);
      results.push(result);
      expect(result.code, result.stderr).toBe(0);
      return result;
    };
    const audit = { audit: true, user: userInfo().username, table: `${schema}.outbox`, database: redactUrl(url) };

    expect((await run(['topics', 'list'])).stdout).toBe(`no paused topics in ${schema}.outbox\n`);

    const paused = await run(['topics', 'pause', 'orders.created', '--reason', ' broker maintenance ']);
    expect(paused.stdout).toBe('topic orders.created paused for every relay (relays hold its messages within about 5 s)\n');
    expect(auditLine(paused)).toMatchObject({
      ...audit,
      action: 'topics.pause',
      topic: 'orders.created',
      reason: 'broker maintenance',
      changed: 1,
      msg: 'topic paused',
    });
    await run(['topics', 'pause', 'payments.refunded']);
    const stored = await pausesOf(schema);
    expect(stored.map(({ topic, reason }) => ({ topic, reason }))).toEqual([
      { topic: 'orders.created', reason: 'broker maintenance' },
      { topic: 'payments.refunded', reason: '' },
    ]);
    const [first, second] = stored.map((pause) => pause.paused_at.toISOString());

    const table = await run(['topics', 'list']);
    expect(table.stdout.split('\n')).toEqual([
      expect.stringMatching(/^topic\s+destination\s+paused by\s+paused at\s+reason$/),
      expect.stringMatching(new RegExp(`^orders\\.created\\s+\\(all\\)\\s+operator\\s+${first}\\s+broker maintenance$`)),
      expect.stringMatching(new RegExp(`^payments\\.refunded\\s+\\(all\\)\\s+operator\\s+${second}\\s+-$`)),
      `2 topic(s) paused by an operator: every relay of ${schema}.outbox holds their messages until 'outboxer topics resume <topic>'`,
      '',
    ]);
    const json = await run(['topics', 'list', '--json']);
    expect(JSON.parse(json.stdout)).toEqual([
      { topic: 'orders.created', pausedBy: 'operator', reason: 'broker maintenance', pausedAt: first },
      { topic: 'payments.refunded', pausedBy: 'operator', reason: '', pausedAt: second },
    ]);

    // Paused already: exit 0, the first reason and time are kept and shown.
    const again = await run(['topics', 'pause', 'orders.created', '--reason', 'another reason']);
    expect(again.stdout).toBe(`topic orders.created was already paused since ${first}: broker maintenance\n`);
    expect(auditLine(again)).toMatchObject({ ...audit, action: 'topics.pause', topic: 'orders.created', changed: 0 });
    expect((await pausesOf(schema))[0]).toMatchObject({ topic: 'orders.created', reason: 'broker maintenance' });

    const resumed = await run(['topics', 'resume', 'orders.created']);
    expect(resumed.stdout).toBe(
      'topic orders.created resumed: its held messages publish as their holds run out (docs/design/failures-and-pauses.md, Operator pauses)\n',
    );
    expect(auditLine(resumed)).toMatchObject({ ...audit, action: 'topics.resume', topic: 'orders.created', changed: 1, msg: 'topic resumed' });
    const notPaused = await run(['topics', 'resume', 'orders.created']);
    expect(notPaused.stdout).toBe('topic orders.created was not paused\n');
    expect(auditLine(notPaused)).toMatchObject({ ...audit, action: 'topics.resume', changed: 0 });
    expect((await pausesOf(schema)).map((pause) => pause.topic)).toEqual(['payments.refunded']);

    for (const result of results) expect(`${result.stdout}${result.stderr}`).not.toContain(password);
  });

  it("lists the topics relays hold for a missing destination after the operators' pauses, read from the held rows, per destination, as a table and JSON", async () => {
    const { env, schema, table } = await migrated();
    const earlier = new Date('2026-11-25T16:30:00.000Z');
    const later = new Date('2026-11-25T16:45:00.000Z');
    // rows as a relay's completion leaves them (held: due later, attempts uncounted), two episodes on one topic
    const hold = (topic: string, lastError: string) =>
      pool.query(`INSERT INTO ${table} (topic, type, payload, due_at, last_error) VALUES ($1, 'x', '{}', now() + interval '1 hour', $2)`, [topic, lastError]);
    await hold('orders.created', relayHoldReason(later, 'OUTBOXER_NO_STREAM: no stream captures "orders.created"'));
    await hold('orders.created', relayHoldReason(earlier, 'OUTBOXER_UNROUTABLE: no queue is bound'));
    await hold('audit.log', relayHoldReason(later, 'OUTBOXER_NO_EXCHANGE: exchange "events" does not exist'));
    await hold('billing.paid', operatorReason('maintenance')); // an operator's hold is not the relay's
    await hold('billing.paid', 'OUTBOXER_PUBLISH_TIMEOUT: no confirmation'); // nor a retried failure
    // a row the producer fanned out to the destination `partner`, held by the relay that publishes there
    const [partner] = await enqueue(schema, [{ topic: 'audit.log', destination: 'partner' }]);
    const partnerHold = relayHoldReason(later, 'OUTBOXER_NO_EXCHANGE: exchange "partner-events" does not exist');
    await pool.query(`UPDATE ${table} SET due_at = now() + interval '1 hour', last_error = $2 WHERE id = $1`, [partner, partnerHold]);
    expect((await runCli(['topics', 'pause', 'billing.paid', '--reason', 'maintenance'], env)).code).toBe(0);
    const [operatorPause] = await pausesOf(schema);

    const json = await runCli(['topics', 'list', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([
      { topic: 'billing.paid', pausedBy: 'operator', reason: 'maintenance', pausedAt: operatorPause?.paused_at.toISOString() },
      {
        topic: 'orders.created',
        destination: null,
        pausedBy: 'relay',
        reason: 'OUTBOXER_NO_STREAM: no stream captures "orders.created"',
        pausedAt: earlier.toISOString(),
        held: 2,
      },
      {
        topic: 'audit.log',
        destination: null,
        pausedBy: 'relay',
        reason: 'OUTBOXER_NO_EXCHANGE: exchange "events" does not exist',
        pausedAt: later.toISOString(),
        held: 1,
      },
      {
        topic: 'audit.log',
        destination: 'partner',
        pausedBy: 'relay',
        reason: 'OUTBOXER_NO_EXCHANGE: exchange "partner-events" does not exist',
        pausedAt: later.toISOString(),
        held: 1,
      },
    ]);
    const text = await runCli(['topics', 'list'], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.split('\n')).toEqual([
      expect.stringMatching(/^topic\s+destination\s+paused by\s+paused at\s+reason$/),
      expect.stringMatching(/^billing\.paid\s+\(all\)\s+operator\s+\S+Z\s+maintenance$/),
      expect.stringMatching(
        /^orders\.created\s+default\s+relay\s+2026-11-25T16:30:00\.000Z\s+destination missing: OUTBOXER_NO_STREAM: no stream captures "orders\.created" \(2 message\(s\) held\)$/,
      ),
      expect.stringMatching(
        /^audit\.log\s+default\s+relay\s+2026-11-25T16:45:00\.000Z\s+destination missing: OUTBOXER_NO_EXCHANGE: exchange "events" .* \(1 message\(s\) held\)$/,
      ),
      expect.stringMatching(
        /^audit\.log\s+partner\s+relay\s+2026-11-25T16:45:00\.000Z\s+destination missing: OUTBOXER_NO_EXCHANGE: exchange "partner-events" .* \(1 message\(s\) held\)$/,
      ),
      `1 topic(s) paused by an operator: every relay of ${schema}.outbox holds their messages until 'outboxer topics resume <topic>'`,
      '3 topic(s) held by the relays: their destination is missing (no queue bound, no exchange or stream); each relay probes it with backoff and publishes by itself once it exists',
      '',
    ]);
  });

  it('refuses a bad topic or reason with exit 2 and the code the store gives, before writing anything', async () => {
    const { env, schema } = await migrated();
    const cases: [string[], RegExp][] = [
      [
        ['topics', 'pause', ''],
        /^outboxer: OUTBOXER_INVALID_TOPIC: a paused topic must be a non-empty string of at most 255 bytes without control characters; got an empty string\n/,
      ],
      [['topics', 'pause', 'x'.repeat(256)], /^outboxer: OUTBOXER_INVALID_TOPIC: .*\(256 bytes\)\n/],
      [['topics', 'resume', 'orders\u001b[31m'], /^outboxer: OUTBOXER_INVALID_TOPIC: .*got "orders\\u001b\[31m" \(11 bytes\)\n/],
      [
        ['topics', 'pause', 'orders.created', '--reason', 'two\nlines'],
        /^outboxer: OUTBOXER_INVALID_OPTION: the reason for pausing topic "orders.created" must be a string of at most 500 bytes without control characters/,
      ],
      [['topics', 'pause', 'orders.created', '--reason', 'r'.repeat(501)], /^outboxer: OUTBOXER_INVALID_OPTION: the reason for pausing topic/],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args, env)));
    for (const [index, [args, message]] of cases.entries()) {
      const result = results[index] as CliResult;
      expect(result.code, result.stderr).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(message);
      expect(result.stderr).toContain(`Usage: outboxer ${args[0]} ${args[1]}`);
      expect(result.stderr).not.toContain('"audit"');
      expect(result.stderr).not.toContain('\u001b');
    }
    expect(await pausesOf(schema)).toEqual([]);

    // The store's own refusal keeps its code too: a table allows 1000 pauses.
    await pool.query(`INSERT INTO "${schema}".outbox_paused_topics (topic, reason) SELECT 'busy.' || n, '' FROM generate_series(1, 1000) AS n`);
    const full = await runCli(['topics', 'pause', 'orders.created'], env);
    expect(full.code, full.stderr).toBe(2);
    expect(full.stderr).toMatch(
      /^outboxer: OUTBOXER_INVALID_OPTION: cannot pause topic "orders.created": 1000 topics are paused already, the most a table allows \(1000\); resume some first\n/,
    );
  });

  it('a table without the list of paused topics (schema version 9) fails with exit 1 and says to migrate', async () => {
    const { env, schema } = await migrated();
    await pool.query(`DROP TABLE "${schema}".outbox_paused_topics`);
    const result = await runCli(['topics', 'list'], env);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(
        `^outboxer topics list: OUTBOXER_NOT_MIGRATED: outbox table "${schema}"\\."outbox" is not migrated \\(it has no list of paused topics: schema version 9 adds it\\): run 'outboxer migrate'`,
      ),
    );
  });

  it('a running relay holds the messages of a topic paused with the CLI while other topics publish, and publishes them once it is resumed', async () => {
    const { env, table } = await migrated();
    // R = min(5 s, lease / 3) = 1 s: the relay reads the list of paused topics every second; holds last at most 0.4 s.
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

    const paused = await runCli(['topics', 'pause', 'orders.held', '--reason', 'maintenance window'], env);
    expect(paused.code, paused.stderr).toBe(0);
    await relay.waitForOutput((out) => out.stderr.includes('topic paused by an operator'), 'the relay to read the pause');

    const insert = async (topic: string, key: string) =>
      (
        (await pool.query(`INSERT INTO ${table} (topic, key, type, payload) VALUES ($1, $2, 'order.x', '{}') RETURNING id::text AS id`, [topic, key]))
          .rows[0] as { id: string }
      ).id;
    const held = await insert('orders.held', 'order-1');
    const flowing = [await insert('orders.flowing', 'order-2'), await insert('orders.flowing', 'order-3')];

    const heldRow = async () =>
      (await pool.query(`SELECT state, attempts, last_error FROM ${table} WHERE id = $1`, [held])).rows[0] as
        { state: string; attempts: number; last_error: string | null } | undefined;
    const remaining = async (ids: string[]) =>
      Number((await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE id = ANY($1::uuid[])`, [ids])).rows[0].n);
    await waitUntil(
      async () => (await remaining(flowing)) === 0 && (await heldRow())?.last_error != null,
      'the other topic to publish and the paused one to be held',
      relay,
    );
    expect(await heldRow()).toEqual({ state: 'pending', attempts: 0, last_error: 'paused by an operator: maintenance window' });
    await relay.waitForOutput((out) => flowing.every((id) => out.stdout.includes(`id=${id}`)), 'a console line per published message');
    expect(relay.stdout).not.toContain(`id=${held}`);

    const resumed = await runCli(['topics', 'resume', 'orders.held'], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    await waitUntil(async () => (await remaining([held])) === 0, 'the held message to publish after the resume', relay);
    await relay.waitForOutput((out) => out.stdout.includes(`id=${held}`), 'the console line of the held message');
    expect((await relay.stop('SIGTERM')).code).toBe(0);
  });
});
