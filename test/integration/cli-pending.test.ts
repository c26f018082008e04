import { userInfo } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { cliFixtures, expectUsageError } from '../support/cli-fixtures.js';
import { cliEnv, runCli } from '../support/cli-runner.js';
import { freshSqliteFile, type FreshSqliteFile } from '../support/sqlite-file.js';

const { pool, migrated, enqueue } = cliFixtures();
const UNKNOWN = '00000000-0000-7000-8000-000000000000';
const SECRET = '{"card": "do-not-show", "n": 1}';

/** A migrated schema with four rows: a due keyed one, one failing (backoff for an hour), an unkeyed one with a secret body and headers, a dead one. */
async function withRows() {
  const setup = await migrated();
  const { table } = setup;
  const insert = async (topic: string, key: string | null, payload = '{"n": 1}', headers = '{}') =>
    (
      (
        await pool.query(`INSERT INTO ${table} (topic, key, type, payload, headers) VALUES ($1, $2, 'order.created', $3, $4) RETURNING id::text AS id`, [
          topic,
          key,
          payload,
          headers,
        ])
      ).rows[0] as { id: string }
    ).id;
  const due = await insert('orders.created', 'k1');
  const failing = await insert('orders.created', 'k2');
  const secret = await insert('payments.done', null, SECRET, '{"tenant": "acme-secret"}');
  const dead = await insert('orders.created', 'k3');
  await pool.query(`UPDATE ${table} SET attempts = 2, last_error = $2, due_at = now() + interval '1 hour' WHERE id = $1`, [
    failing,
    'OUTBOXER_PUBLISH_TIMEOUT: no confirmation\nin time \u001b[31m',
  ]);
  await pool.query(`UPDATE ${table} SET state = 'dead', dead_at = now(), last_error = 'x' WHERE id = $1`, [dead]);
  await pool.query(`UPDATE ${table} SET created_at = now() - interval '10 minutes' WHERE id = $1`, [due]);
  return { ...setup, due, failing, secret, dead };
}

describe('outboxer CLI: pending messages', () => {
  it('pending list shows where each pending message stands, in store order, filtered, never a body; --json every field', async () => {
    const { env, schema, due, failing, secret } = await withRows();
    const listed = await runCli(['pending', 'list'], env);
    expect(listed.code, listed.stderr).toBe(0);
    const [header, first, second, third, summary] = listed.stdout.split('\n');
    expect(header).toMatch(/^id\s+seq\s+topic\s+destination\s+key\s+attempts\s+age\s+due\s+last error$/);
    expect(first).toMatch(new RegExp(`^${due}\\s+\\d+\\s+orders\\.created\\s+default\\s+k1\\s+0\\s+10m \\d+s\\s+-\\s+-$`));
    expect(second).toMatch(
      new RegExp(
        `^${failing}\\s+\\d+\\s+orders\\.created\\s+default\\s+k2\\s+2\\s+\\S+\\s+in (59m \\d+s|1h 0s)\\s+OUTBOXER_PUBLISH_TIMEOUT: no confirmation in time \\\\u001b\\[31m$`,
      ),
    );
    expect(third).toMatch(new RegExp(`^${secret}\\s+\\d+\\s+payments\\.done\\s+default\\s+-\\s+0\\s`));
    expect(summary).toBe('3 pending message(s)');
    expect(listed.stdout).not.toMatch(/do-not-show|acme-secret|\u001b/);

    const only = async (...flags: string[]) => {
      const result = await runCli(['pending', 'list', '--json', ...flags], env);
      expect(result.code, result.stderr).toBe(0);
      return (JSON.parse(result.stdout) as { id: string }[]).map((m) => m.id);
    };
    // independent runs side by side: each CLI process takes a while to start
    const [byTopic, byKey, byAge, byBoth, json, limited, none] = await Promise.all([
      only('--topic', 'orders.created'),
      only('--key', 'k2'),
      only('--older-than-s', '300'),
      only('--topic', 'payments.done', '--key', 'k1'),
      runCli(['pending', 'list', '--json', '--key', 'k2'], env),
      runCli(['pending', 'list', '--limit', '1', '--topic', 'orders.created'], env),
      runCli(['pending', 'list', '--topic', 'nothing.here'], env),
    ]);
    expect([byTopic, byKey, byAge, byBoth]).toEqual([[due, failing], [failing], [due], []]);
    expect(JSON.parse(json.stdout)).toEqual([
      {
        id: failing,
        seq: expect.stringMatching(/^\d+$/),
        topic: 'orders.created',
        destination: null,
        type: 'order.created',
        key: 'k2',
        attempts: 2,
        lastError: 'OUTBOXER_PUBLISH_TIMEOUT: no confirmation\nin time \u001b[31m',
        createdAt: expect.any(String),
        dueAt: expect.any(String),
        ageSeconds: expect.any(Number),
      },
    ]);
    expect(limited.stdout).toContain('1 pending message(s) (topic orders.created); there may be more: raise --limit (now 1)');
    expect(none.stdout).toBe(`no pending messages in ${schema}.outbox (topic nothing.here)\n`);
  });

  it("pending list --destination lists one destination's messages (default: those stored without one); rows and show name theirs", async () => {
    const { env, schema } = await migrated();
    const [own, partner, archived] = (await enqueue(schema, [
      { key: 'k1' },
      { key: 'k1', destination: 'partner' },
      { topic: 'payments.done', destination: 'archive' },
    ])) as [string, string, string];
    const listed = async (...flags: string[]) => {
      const result = await runCli(['pending', 'list', '--json', ...flags], env);
      expect(result.code, result.stderr).toBe(0);
      return (JSON.parse(result.stdout) as { id: string; destination: string | null }[]).map((m) => [m.id, m.destination]);
    };
    const [all, ofPartner, ofDefault, withTopic, text, none, shown, shownJson, refused] = await Promise.all([
      listed(),
      listed('--destination', 'partner'),
      listed('--destination', 'default'),
      listed('--destination', 'archive', '--topic', 'orders.created'),
      runCli(['pending', 'list', '--destination', 'partner', '--key', 'k1'], env),
      runCli(['pending', 'list', '--destination', 'nobody'], env),
      runCli(['pending', 'show', partner], env),
      runCli(['pending', 'show', archived, '--json'], env),
      runCli(['pending', 'list', '--destination', 'no/such'], env),
    ]);
    expect(all).toEqual([
      [own, null],
      [partner, 'partner'],
      [archived, 'archive'],
    ]);
    expect([ofPartner, ofDefault, withTopic]).toEqual([[[partner, 'partner']], [[own, null]], []]);
    const [header, row, summary] = text.stdout.split('\n');
    expect(header).toMatch(/^id\s+seq\s+topic\s+destination\s+key\s+attempts\s+age\s+due\s+last error$/);
    expect(row).toMatch(new RegExp(`^${partner}\\s+\\d+\\s+orders\\.created\\s+partner\\s+k1\\s+0\\s`));
    expect(summary).toBe('1 pending message(s) (destination partner, key k1)');
    expect(none.stdout).toBe(`no pending messages in ${schema}.outbox (destination nobody)\n`);
    expect(shown.stdout).toMatch(/\ntopic\s+orders\.created\ndestination\s+partner\ntype\s+order\.created\n/);
    expect(JSON.parse(shownJson.stdout)).toMatchObject({ id: archived, topic: 'payments.done', destination: 'archive', payload: 'hidden' });
    expectUsageError(refused, /^outboxer: OUTBOXER_INVALID_DESTINATION: --destination: destination "no\/such" is invalid/);
  });

  it("pending show prints one message, its headers' values and body only with --payload; a message not pending is exit 1", async () => {
    const { env, secret, dead } = await withRows();
    const shown = await runCli(['pending', 'show', secret.toUpperCase()], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^id\\s+${secret}\\n`));
    expect(shown.stdout).toMatch(/\nstate\s+pending, due \(published in its key's turn\)\n/);
    expect(shown.stdout).toMatch(/\nheaders\s+tenant\n/);
    expect(shown.stdout).toContain(`body          ${Buffer.byteLength(SECRET)} bytes (hidden: 'outboxer pending show --payload' prints it)`);
    expect(shown.stdout).not.toMatch(/do-not-show|acme-secret/);

    const [withPayload, hidden, revealed, ...missing] = await Promise.all([
      runCli(['pending', 'show', secret, '--payload'], env),
      runCli(['pending', 'show', secret, '--json'], env),
      runCli(['pending', 'show', secret, '--json', '--payload'], env),
      ...[dead, UNKNOWN].map((id) => runCli(['pending', 'show', id], env)),
    ]);
    expect(withPayload.stdout).toContain(`\nheaders:\n  tenant: acme-secret\n\nbody:\n${SECRET}\n`);
    const hiddenJson = JSON.parse(hidden.stdout) as Record<string, unknown>;
    expect(hiddenJson).toMatchObject({
      id: secret,
      payload: 'hidden',
      headerNames: ['tenant'],
      bodyBytes: Buffer.byteLength(SECRET),
      contentType: 'application/json',
    });
    expect(hiddenJson).not.toHaveProperty('body');
    expect(JSON.parse(withPayload.stderr.trim())).toMatchObject({ audit: true, action: 'pending.show', id: secret, changed: 0 });
    expect(withPayload.stderr).not.toMatch(/do-not-show|acme-secret/);
    expect(hidden.stderr).toBe('');
    const shownJson = JSON.parse(revealed.stdout) as Record<string, unknown>;
    expect(shownJson).toMatchObject({ payload: 'shown', headers: { tenant: 'acme-secret' }, body: { text: SECRET } });

    [dead, UNKNOWN].forEach((id, index) => {
      expect(missing[index]?.code).toBe(1);
      expect(missing[index]?.stderr).toMatch(
        new RegExp(`^outboxer pending show: OUTBOXER_NOT_FOUND: no pending message ${id} in .*: it was published, parked dead`),
      );
    });
  });

  it('pending delete deletes the messages still pending, reports the others, and writes an audit line', async () => {
    const { env, table, schema, due, failing, secret, dead } = await withRows();
    const result = await runCli(['pending', 'delete', due, failing.toUpperCase(), dead, UNKNOWN, due], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('2 of 4 requested pending message(s) deleted\n');
    const [auditLine, notice] = result.stderr.trim().split('\n');
    expect(JSON.parse(auditLine ?? '')).toMatchObject({
      audit: true,
      action: 'pending.delete',
      user: userInfo().username,
      table: `${schema}.outbox`,
      requested: 4,
      ids: [due, failing, dead, UNKNOWN],
      changed: 2,
    });
    expect(notice).toBe(
      `outboxer pending delete: 2 of the given ids are not pending messages in ${schema}.outbox (unknown, published, dead, or deleted already)`,
    );
    const left = await pool.query(`SELECT id::text AS id, state FROM ${table} ORDER BY seq`);
    expect(left.rows).toEqual([
      { id: secret, state: 'pending' },
      { id: dead, state: 'dead' },
    ]);
    expect((await runCli(['pending', 'delete', due], env)).stdout).toBe('0 of 1 requested pending message(s) deleted\n');
  });

  it('has help for the group and each subcommand, naming their flags', async () => {
    const [group, list, show, remove] = await Promise.all([
      runCli(['help', 'pending'], cliEnv()),
      runCli(['pending', 'list', '--help'], cliEnv()),
      runCli(['help', 'pending', 'show'], cliEnv()),
      runCli(['pending', 'delete', '--help'], cliEnv()),
    ]);
    for (const result of [group, list, show, remove]) expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(group.stdout).toMatch(/^Usage: outboxer pending list\|show\|delete/);
    expect(list.stdout).toMatch(/--older-than-s <s>\s+only messages created at least this many seconds ago/);
    expect(list.stdout).toMatch(/--topic <topic>\s+only this topic, exactly/);
    expect(show.stdout).toMatch(/--payload\s+print the headers' values and the body too/);
    expect(remove.stdout).toContain('may still publish it once');
  });

  it('refuses command lines that cannot be meant, before anything connects (exit 2)', async () => {
    const env = cliEnv({ OUTBOXER_DATABASE_URL: 'postgres://nobody:secret@127.0.0.1:1/none' });
    const cases: [string[], RegExp][] = [
      [['pending'], /'pending' needs a subcommand: list, show or delete/],
      [['pending', 'show'], /'pending show' needs the id of a pending message/],
      [['pending', 'show', UNKNOWN, UNKNOWN.replace(/0$/, '1')], /'pending show' takes one message id/],
      [['pending', 'show', 'not-a-uuid'], /not a message id \(UUID\): "not-a-uuid"/],
      [['pending', 'delete'], /'pending delete' needs the ids of the pending messages to delete/],
      [['pending', 'delete', '--all'], /--all does not apply to 'pending delete'/],
      [['pending', 'list', '--payload'], /--payload does not apply to 'pending list'/],
      [['pending', 'delete', UNKNOWN, '--destination', 'partner'], /--destination does not apply to 'pending delete'/],
      [['pending', 'list', '--destination', ''], /OUTBOXER_INVALID_DESTINATION: --destination: destination "" is invalid/],
      [['pending', 'list', '--topic', ''], /OUTBOXER_INVALID_TOPIC: a topic filter must be a non-empty string/],
      [['pending', 'list', '--older-than-s', 'soon'], /--older-than-s must be a whole number from 0/],
      [['pending', 'list', 'orders'], /unexpected argument 'orders' for 'pending list'/],
    ];
    const results = await Promise.all(cases.map(([argv]) => runCli(argv, env)));
    cases.forEach(([, message], index) => expectUsageError(results[index] as Awaited<ReturnType<typeof runCli>>, message));
  });
});

describe('outboxer CLI: pending messages on SQLite', () => {
  let file: FreshSqliteFile | undefined;
  afterEach(async () => {
    await file?.cleanup();
    file = undefined;
  });

  it('lists, shows and deletes as on PostgreSQL', async () => {
    file = freshSqliteFile('cli-pending');
    const env = cliEnv({ OUTBOXER_DATABASE_URL: `sqlite:${file.path}` });
    expect((await runCli(['migrate'], env)).code).toBe(0);
    const handle = file.connect();
    const insert = handle.prepare(`INSERT INTO outbox (topic, key, type, payload) VALUES (?, ?, 'order.created', ?) RETURNING id`);
    const first = (insert.get('orders.created', 'k', SECRET) as { id: string }).id;
    const second = (insert.get('orders.created', 'k', '{}') as { id: string }).id;

    const listed = JSON.parse((await runCli(['pending', 'list', '--json', '--key', 'k'], env)).stdout) as { id: string }[];
    expect(listed.map((m) => m.id)).toEqual([first, second]);
    const shown = JSON.parse((await runCli(['pending', 'show', first, '--json', '--payload'], env)).stdout) as Record<string, unknown>;
    expect(shown).toMatchObject({ id: first, body: { text: SECRET }, bodyBytes: Buffer.byteLength(SECRET) });
    const deleted = await runCli(['pending', 'delete', first], env);
    expect(deleted.stdout, deleted.stderr).toBe('1 of 1 requested pending message(s) deleted\n');
    expect(handle.prepare('SELECT id FROM outbox').all()).toEqual([{ id: second }]);
  });
});
