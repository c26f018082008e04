import { userInfo } from 'node:os';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import amqp from 'amqplib';
import { describe, expect, it } from 'vitest';
import { cliFixtures, expectUsageError, waitUntil } from '../support/cli-fixtures.js';
import { cliEnv, runCli } from '../support/cli-runner.js';
import { services, uniqueName } from '../support/services.js';

const { pool, start, migrated, insert, enqueue, countRows } = cliFixtures();

describe('outboxer CLI: dead messages', () => {
  it('lists, retries and purges dead messages, with an audit line per mutation', async () => {
    const { env, table, schema } = await migrated();
    const ids = await insert(table, 4);
    const [a, b, c] = ids as [string, string, string, string];
    await pool.query(`UPDATE ${table} SET state = 'dead', dead_at = now(), attempts = 10, last_error = $2 WHERE id = ANY($1::uuid[])`, [
      [a, b, c],
      'OUTBOXER_UNROUTABLE: no queue bound\nfor this topic \u001b[31m',
    ]);

    const listed = await runCli(['dead', 'list', '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    const dead = JSON.parse(listed.stdout) as Record<string, unknown>[];
    expect(dead.map((m) => m.id).sort()).toEqual([a, b, c].sort());
    expect(dead[0]).toMatchObject({
      topic: 'orders.created',
      destination: null,
      type: 'order.created',
      attempts: 10,
      reason: 'OUTBOXER_UNROUTABLE: no queue bound\nfor this topic \u001b[31m',
    });
    expect(new Date(String(dead[0]?.deadAt)).getTime()).not.toBeNaN();

    const limited = await runCli(['dead', 'list', '--limit', '2'], env);
    expect(limited.code, limited.stderr).toBe(0);
    expect(limited.stdout).toMatch(/^id\s+topic\s+destination\s+type\s+key\s+attempts\s+dead at\s+reason/);
    expect(limited.stdout).toContain('OUTBOXER_UNROUTABLE: no queue bound for this topic \\u001b[31m');
    expect(limited.stdout).not.toContain('\u001b');
    expect(limited.stdout).toContain('2 dead message(s); there may be more');

    const retried = await runCli(['dead', 'retry', a.toUpperCase(), b], env);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toBe('2 of 2 requested dead message(s) moved back to pending\n');
    const audit = JSON.parse(retried.stderr.trim()) as Record<string, unknown>;
    expect(audit).toMatchObject({ audit: true, action: 'dead.retry', user: userInfo().username, table: `${schema}.outbox`, changed: 2, requested: 2 });
    expect(audit.ids).toEqual([a, b]);
    const back = await pool.query(`SELECT state, attempts FROM ${table} WHERE id = ANY($1::uuid[])`, [[a, b]]);
    expect(back.rows).toEqual([
      { state: 'pending', attempts: 0 },
      { state: 'pending', attempts: 0 },
    ]);

    const notDead = await runCli(['dead', 'purge', a], env);
    expect(notDead.code, notDead.stderr).toBe(0);
    expect(notDead.stdout).toBe('0 of 1 requested dead message(s) deleted\n');
    expect(notDead.stderr).toContain('not dead messages');

    const purged = await runCli(['dead', 'purge', '--all'], env);
    expect(purged.code, purged.stderr).toBe(0);
    expect(purged.stdout).toBe('1 dead message(s) deleted\n');
    expect(JSON.parse(purged.stderr.trim())).toMatchObject({ audit: true, action: 'dead.purge', requested: 'all', changed: 1 });
    expect(await countRows(table)).toBe(3);
    expect(await countRows(table, `state = 'dead'`)).toBe(0);

    const empty = await runCli(['dead', 'list'], env);
    expect(empty.stdout).toContain('no dead messages');
  });
});

describe('outboxer CLI: dead messages of one destination', () => {
  it('lists, retries and purges the dead messages of one destination (--destination; default: those stored without one), each row naming its own', async () => {
    const { env, table, schema } = await migrated();
    const [own, partner, other] = (await enqueue(schema, [{ key: 'k1' }, { key: 'k1', destination: 'partner' }, { key: 'k2', destination: 'archive' }])) as [
      string,
      string,
      string,
    ];
    await pool.query(`UPDATE ${table} SET state = 'dead', dead_at = now(), attempts = 3, last_error = 'OUTBOXER_PUBLISH_FAILED: refused'`);

    const ids = async (...flags: string[]) => {
      const result = await runCli(['dead', 'list', '--json', ...flags], env);
      expect(result.code, result.stderr).toBe(0);
      return (JSON.parse(result.stdout) as { id: string; destination: string | null }[]).map((m) => [m.id, m.destination]);
    };
    const [all, ofPartner, ofDefault, ofNobody, text, empty] = await Promise.all([
      ids(),
      ids('--destination', 'partner'),
      ids('--destination', 'default'),
      ids('--destination', 'nobody'),
      runCli(['dead', 'list', '--destination', 'partner'], env),
      runCli(['dead', 'list', '--destination', 'nobody'], env),
    ]);
    expect(all).toEqual([
      [own, null],
      [partner, 'partner'],
      [other, 'archive'],
    ]);
    expect([ofPartner, ofDefault, ofNobody]).toEqual([[[partner, 'partner']], [[own, null]], []]);
    const [header, row, summary] = text.stdout.split('\n');
    expect(header).toMatch(/^id\s+topic\s+destination\s+type\s+key\s+attempts\s+dead at\s+reason$/);
    expect(row).toMatch(new RegExp(`^${partner}\\s+orders\\.created\\s+partner\\s+order\\.created\\s+k1\\s+3\\s`));
    expect(summary).toBe('1 dead message(s) (destination partner)');
    expect(empty.stdout).toBe(`no dead messages in ${schema}.outbox (destination nobody)\n`);
    const everyRow = await runCli(['dead', 'list'], env);
    expect(everyRow.stdout).toMatch(new RegExp(`\\n${own}\\s+orders\\.created\\s+default\\s+order\\.created\\s`));

    const retried = await runCli(['dead', 'retry', '--all', '--destination', 'partner'], env);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toBe('1 dead message(s) of destination partner moved back to pending\n');
    expect(JSON.parse(retried.stderr.trim())).toMatchObject({ audit: true, action: 'dead.retry', requested: 'all', destination: 'partner', changed: 1 });

    const purged = await runCli(['dead', 'purge', own, other, '--destination', 'default'], env);
    expect(purged.code, purged.stderr).toBe(0);
    expect(purged.stdout).toBe('1 of 2 requested dead message(s) of destination default deleted\n');
    expect(purged.stderr).toContain(`1 of the given ids are not dead messages in ${schema}.outbox (unknown, not dead, or of another destination than default)`);
    const left = await pool.query(`SELECT id::text AS id, state, destination FROM ${table} ORDER BY seq`);
    expect(left.rows).toEqual([
      { id: partner, state: 'pending', destination: 'partner' },
      { id: other, state: 'dead', destination: 'archive' },
    ]);
  });

  it("refuses a --destination that is no destination's name before connecting (exit 2)", async () => {
    const env = cliEnv({ OUTBOXER_DATABASE_URL: 'postgres://nobody:secret@127.0.0.1:1/none' });
    const results = await Promise.all([
      runCli(['dead', 'list', '--destination', 'two words'], env),
      runCli(['dead', 'retry', '--all', '--destination=-x'], env),
      runCli(['dead', 'purge', '--all', '--destination', 'p'.repeat(65)], env),
    ]);
    for (const result of results)
      expectUsageError(
        result,
        /^outboxer: OUTBOXER_INVALID_DESTINATION: --destination: destination ".*" is invalid: a destination is an ASCII letter or digit/,
      );
  });
});

describe('outboxer CLI: dead list with a reason the relay wrote', () => {
  it('shows the cause of a message the broker refused for good, not the repeated id that used to push it out of view', async () => {
    const prefix = uniqueName('p');
    const stream = uniqueName('s');
    const { env, table } = await migrated({ OUTBOXER_SUBJECT_PREFIX: prefix, OUTBOXER_BROKER_URL: services.natsUrl });
    const nc = await natsConnect({ servers: services.natsUrl });
    const jsm = await jetstreamManager(nc);
    try {
      // The stream takes at most 256 bytes a message: a 1 KB payload is refused for good, and parked dead at once.
      await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`], max_msg_size: 256 });
      const inserted = await pool.query(
        `INSERT INTO ${table} (topic, type, payload) VALUES ('orders.created', 'order.created', jsonb_build_object('pad', repeat('x', 1024))) RETURNING id::text AS id`,
      );
      const id = (inserted.rows[0] as { id: string }).id;
      const relay = start(['relay', '--publisher', 'nats', '--poll-interval-ms', '50'], env);
      await waitUntil(async () => (await countRows(table, `state = 'dead'`)) === 1, 'the message to be parked dead', relay);
      expect((await relay.stop('SIGTERM')).code).toBe(0);

      const json = await runCli(['dead', 'list', '--json'], env);
      expect(json.code, json.stderr).toBe(0);
      const [dead] = JSON.parse(json.stdout) as { id: string; reason: string }[];
      expect(dead?.id).toBe(id);
      // As stored: the publisher names the message first, then the cause.
      expect(dead?.reason).toMatch(new RegExp(`^OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER: message ${id} is larger than the max_msg_size of the stream`));

      const text = await runCli(['dead', 'list'], env);
      expect(text.code, text.stderr).toBe(0);
      const [header, row] = text.stdout.split('\n');
      expect(header).toMatch(/^id\s+topic\s+destination\s+type\s+key\s+attempts\s+dead at\s+reason$/);
      expect(row).toMatch(
        new RegExp(
          `^${id}\\s+orders\\.created\\s+default\\s+order\\.created\\s+-\\s+1\\s+\\S+\\s+OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER: the message is larger than the max_msg_size of the stream capturing "${prefix}\\.orders\\.created"`,
        ),
      );
      expect(row).toContain("raise the stream's max_msg_size or lower maxPayloadBytes at enqueue");
      expect(row?.split(id)).toHaveLength(2);
    } finally {
      await jsm.streams.delete(stream).catch(() => undefined);
      await nc.close();
    }
  });
});

describe('outboxer CLI: the reason of a message parked after its attempts ran out', () => {
  it('says what happened and what to do (`outboxer dead retry <id>`), and nothing of a retry that will not come', async () => {
    const { env, table } = await migrated();
    const exchange = uniqueName('ex');
    const prefix = uniqueName('p');
    const connection = await amqp.connect(services.amqpUrl);
    try {
      const channel = await connection.createChannel();
      await channel.assertExchange(exchange, 'topic', { durable: true });
      // A queue that takes nothing: RabbitMQ nacks every publish routed to it.
      const { queue } = await channel.assertQueue('', { exclusive: true, maxLength: 0, overflow: 'reject-publish' });
      await channel.bindQueue(queue, exchange, `${prefix}.#`);
      const [id] = await insert(table, 1, `${prefix}.orders`);
      const relay = start(
        [
          'relay',
          '--publisher',
          'rabbitmq',
          '--broker-url',
          services.amqpUrl,
          '--exchange',
          exchange,
          '--poll-interval-ms',
          '50',
          '--max-attempts',
          '2',
          '--retry-base-delay-ms',
          '50',
          '--retry-jitter',
          '0',
        ],
        env,
      );
      await waitUntil(async () => (await countRows(table, `state = 'dead'`)) === 1, 'the message to be parked dead', relay);
      const stopped = await relay.stop('SIGTERM');
      expect(stopped.code, stopped.stderr).toBe(0);
      // The first failure was retried, and its log says so.
      expect(stopped.stderr).toMatch(/"msg":"publish failed; will retry"/);

      const listed = await runCli(['dead', 'list', '--json'], env);
      expect(listed.code, listed.stderr).toBe(0);
      const [dead] = JSON.parse(listed.stdout) as { id: string; attempts: number; reason: string }[];
      expect(dead).toMatchObject({ id, attempts: 2 });
      expect(dead?.reason).toMatch(new RegExp(`^OUTBOXER_PUBLISH_FAILED: message ${id} was nacked by RabbitMQ: it did not store it`));
      expect(dead?.reason).toMatch(
        /; parked as dead after 2 failed attempts \(retry\.maxAttempts\): fix the cause, then run 'outboxer dead retry <id>' to publish it again$/,
      );
      expect(dead?.reason).not.toMatch(/will be retried/);
    } finally {
      const cleanup = await connection.createChannel();
      await cleanup.deleteExchange(exchange);
      await connection.close();
    }
  });
});
