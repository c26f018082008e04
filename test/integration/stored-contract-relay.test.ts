import { afterEach, describe, expect, it } from 'vitest';
import { MessageRules } from '../../src/core/message-rules.js';
import { Outbox } from '../../src/core/outbox.js';
import type { Relay } from '../../src/core/relay.js';
import type { SqlExecutor } from '../../src/stores/postgres/database.js';
import { type BrokerRig, natsRig, rabbitMqRig } from '../support/broker-rigs.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { waitFor } from '../support/wait-for.js';

const timing = {
  engine: 'v2',
  pollIntervalMs: 20,
  maxPollIntervalMs: 100,
  errorBackoffMs: 50,
  maxErrorBackoffMs: 200,
  leaseMs: 9000,
  publishTimeoutMs: 3000,
} as const;
const RULES = MessageRules;

/**
 * Rows written by plain SQL before the table checked them (its trigger off, as before migration 10): published as
 * they were on RabbitMQ, and NATS parked only some. Each is parked dead now, with the library's words, on both.
 */
describe.each([
  ['RabbitMQ', rabbitMqRig],
  ['NATS JetStream', natsRig],
])('rows stored before the table contract, relayed to %s', (_name, makeRig) => {
  let fixture: PostgresFixture | undefined;
  let rig: BrokerRig | undefined;
  const relays: Relay[] = [];
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((r) => r.stop()));
    await rig?.cleanup();
    await fixture?.cleanup();
    fixture = undefined;
    rig = undefined;
  });

  it('parks each one dead with the rule it breaks, and publishes the rest', async () => {
    fixture = await createPostgresFixture();
    rig = await makeRig();
    const table = `"${fixture.schema}".outbox`;
    const topic = rig.topic('orders');
    const legacy: [string, Record<string, string>, string][] = [
      [topic, { 'x tenant': 'acme' }, `OUTBOXER_INVALID_HEADER: message %s: header name "x tenant" is invalid: ${RULES.headerName}`],
      [topic, { tenant: 'acme\r\nX-Injected: 1' }, `OUTBOXER_INVALID_HEADER: message %s: header "tenant" is invalid: ${RULES.headerValue}`],
      [topic, { tenant: 'x'.repeat(5000) }, `OUTBOXER_INVALID_HEADER: message %s: header "tenant" is invalid: ${RULES.headerValue}`],
      [topic, { ['n'.repeat(200)]: 'v' }, `OUTBOXER_INVALID_HEADER: message %s: header name "${'n'.repeat(80)}" is invalid: ${RULES.headerName}`],
      [topic, { traceparent: 'not-a-trace' }, `OUTBOXER_INVALID_HEADER: message %s: header "traceparent" is invalid: ${RULES.traceparent}`],
      [`${topic}.#`, {}, `OUTBOXER_INVALID_TOPIC: message %s: topic "${topic}.#" is invalid: ${RULES.topic}`],
    ];
    await fixture.pool.query(`ALTER TABLE ${table} DISABLE TRIGGER outbox_contract`);
    const expected = new Map<string, string>();
    for (const [rowTopic, headers, reason] of legacy) {
      const inserted = await fixture.pool.query(
        `INSERT INTO ${table} (topic, key, type, payload, headers) VALUES ($1, 'k', 'x', '{}', $2::jsonb) RETURNING id::text AS id`,
        [rowTopic, JSON.stringify(headers)],
      );
      const id = inserted.rows[0].id as string;
      expected.set(id, `${reason.replace('%s', id)} (stored before the table checked it)`);
    }
    await fixture.pool.query(`ALTER TABLE ${table} ENABLE TRIGGER outbox_contract`);
    const good = await fixture.pool.query(
      `INSERT INTO ${table} (topic, key, type, payload, headers) VALUES ($1, 'k', 'x', '{}', '{"tenant": "acme"}') RETURNING id::text AS id`,
      [topic],
    );

    const relay = new Outbox<SqlExecutor>(fixture.store).createRelay(rig.publisher(), timing);
    relays.push(relay);
    relay.start();
    const deliveries = rig.deliveries;
    await waitFor(() => deliveries.includes(good.rows[0].id as string), { timeoutMs: 30_000, what: 'the valid row at the broker' });
    const dead = await waitFor(
      async () => {
        const rows = (await fixture?.pool.query(`SELECT id::text AS id, last_error FROM ${table} WHERE state = 'dead'`))?.rows ?? [];
        return rows.length === legacy.length ? rows : undefined;
      },
      { timeoutMs: 30_000, what: 'every legacy row dead' },
    );
    // The reason starts with the publisher's refusal; the relay adds what to do about a dead message.
    const startsWith = (text: string) => expect.stringMatching(new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    expect(Object.fromEntries(dead.map((row) => [row.id, row.last_error]))).toEqual(
      Object.fromEntries([...expected].map(([id, reason]) => [id, startsWith(reason)])),
    );
    expect(deliveries).toEqual([good.rows[0].id]);
  });
});
