import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { jetstream } from '@nats-io/jetstream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rebuildMessage } from '../../src/consumer/received-message.js';
import { rawDeliveryOf as natsDeliveryOf } from '../../src/brokers/nats/consumer/wire.js';
import { rawDeliveryOf as amqpDeliveryOf } from '../../src/brokers/rabbitmq/consumer/wire.js';
import { Outbox } from '../../src/core/outbox.js';
import type { Publisher } from '../../src/core/ports.js';
import { encodeHeaderValue } from '../../src/brokers/header-value.js';
import { createNatsPublisher } from '../../src/brokers/nats/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import type { SqlExecutor } from '../../src/stores/postgres/database.js';
import { BINARY, ODD_JSON } from '../conformance/store-body-conformance.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { addStream, natsAdmin } from '../support/nats-harness.js';
import { openAdmin } from '../support/rabbitmq-harness.js';
import { services, uniqueName } from '../support/services.js';
import { waitFor } from '../support/wait-for.js';

const run = promisify(execFile);
const FOREIGN = fileURLToPath(new URL('../support/foreign/', import.meta.url));
/** Debian's own interpreter, where python3-pika is installed (.ci/services), not whichever python3 is first on PATH. */
const PYTHON = '/usr/bin/python3';
const SOURCE = '/orders-service';
const KEY = 'Kunde Müller 7';
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const PROTOBUF = 'application/x-protobuf; messageType="acme.Order"';

interface Stored {
  readonly id: string;
  readonly type: string;
  readonly key: string | null;
  readonly contentType: string;
  readonly bodyHex: string;
  readonly time: string;
  readonly headers: Record<string, string>;
}

/**
 * Stores three messages the ways producers do (plain SQL with odd JSON and non-ASCII headers, a binary
 * enqueue, a JSON enqueue), relays them with `publisher`, and returns what was stored, by id.
 */
async function storeAndRelay(fixture: PostgresFixture, topic: string, publisher: Publisher): Promise<Map<string, Stored>> {
  const table = `"${fixture.schema}"."outbox"`;
  await fixture.pool.query(`INSERT INTO ${table} (topic, key, type, payload, headers) VALUES ($1, $2, 'order.created', $3, $4)`, [
    topic,
    KEY,
    ODD_JSON,
    JSON.stringify({ tenant: 'Müller GmbH', traceparent: TRACEPARENT }),
  ]);
  const outbox = new Outbox<SqlExecutor>(fixture.store);
  const client = await fixture.pool.connect();
  try {
    await client.query('BEGIN');
    await outbox.enqueue(client, { topic, key: KEY, type: 'order.proto', payload: BINARY, contentType: PROTOBUF });
    await outbox.enqueue(client, { topic, type: 'order.noted', payload: { z: 1, a: 'é' }, headers: { note: '50% "off"' } });
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  const rows = await fixture.pool.query(
    `SELECT id::text AS id, type, key, content_type, encode(COALESCE(convert_to(payload::text, 'UTF8'), payload_bytes), 'hex') AS body_hex, created_at, headers FROM ${table}`,
  );
  const stored = new Map<string, Stored>();
  for (const row of rows.rows as {
    id: string;
    type: string;
    key: string | null;
    content_type: string;
    body_hex: string;
    created_at: Date;
    headers: Record<string, string>;
  }[]) {
    stored.set(row.id, {
      id: row.id,
      type: row.type,
      key: row.key,
      contentType: row.content_type,
      bodyHex: row.body_hex,
      time: row.created_at.toISOString(),
      headers: row.headers,
    });
  }
  const relay = outbox.createRelay(publisher, { publishTimeoutMs: 10_000, pollIntervalMs: 20, maxPollIntervalMs: 100 });
  relay.start();
  try {
    await waitFor(async () => (await fixture.store.stats()).pending === 0, { what: 'every stored message published' });
  } finally {
    await relay.stop();
  }
  expect(await fixture.store.stats()).toMatchObject({ pending: 0, dead: 0 });
  return stored;
}

describe('what other languages read from the wire', () => {
  let fixture: PostgresFixture | undefined;
  let scratch = '';
  const cleanups: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'outboxer-wire-'));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    await fixture?.cleanup();
    fixture = undefined;
  });

  it('RabbitMQ, read with Python pika: exact body bytes, content types, headers and CloudEvents attributes', async () => {
    fixture = await createPostgresFixture();
    const admin = await openAdmin();
    const exchange = uniqueName('wire_ex');
    const [forPika, forUs] = [uniqueName('wire_pika'), uniqueName('wire_ours')];
    const topic = `${uniqueName('w')}.orders`;
    await admin.channel.assertExchange(exchange, 'topic', { durable: false, autoDelete: false });
    for (const queue of [forPika, forUs]) {
      await admin.channel.assertQueue(queue, { durable: false, autoDelete: false });
      await admin.channel.bindQueue(queue, exchange, topic);
    }
    cleanups.push(async () => {
      for (const queue of [forPika, forUs]) await admin.channel.deleteQueue(queue);
      await admin.channel.deleteExchange(exchange);
      await admin.close();
    });
    const publisher = createRabbitMqPublisher({ url: services.amqpUrl, exchange, declareExchange: false, cloudEvents: { source: SOURCE } });
    cleanups.push(() => publisher.close());
    const stored = await storeAndRelay(fixture, topic, publisher);

    const { stdout } = await run(PYTHON, [join(FOREIGN, 'amqp_reader.py'), services.amqpUrl, forPika, '3'], { timeout: 30_000 });
    const read = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown> & { message_id: string; headers: Record<string, unknown> });
    expect(read).toHaveLength(3);
    for (const message of read) {
      const expected = stored.get(message.message_id) as Stored;
      expect(message).toMatchObject({
        routing_key: topic,
        body_hex: expected.bodyHex,
        content_type: expected.contentType,
        type: expected.type,
        app_id: 'outboxer',
        delivery_mode: 2,
      });
      expect(message.headers).toEqual({
        ...expected.headers,
        'x-outbox-id': expected.id,
        'x-outbox-type': expected.type,
        ...(expected.key === null ? {} : { 'x-outbox-key': expected.key, cloudEvents_subject: expected.key }),
        cloudEvents_specversion: '1.0',
        cloudEvents_id: expected.id,
        cloudEvents_source: SOURCE,
        cloudEvents_type: expected.type,
        cloudEvents_time: expected.time,
      });
    }
    expect(read.map((m) => m.body_hex)).toContain(Buffer.from(ODD_JSON).toString('hex'));
    expect(read.map((m) => m.body_hex)).toContain(Buffer.from(BINARY).toString('hex'));

    // Our own consumer reads the same CloudEvents messages: bytes for protobuf, parsed JSON, attributes out of the headers.
    const ours = [];
    for (let i = 0; i < 3; i++) {
      const delivery = await admin.channel.get(forUs, { noAck: true });
      if (delivery === false) throw new Error(`message ${i + 1} of 3 missing in ${forUs}`);
      ours.push(rebuildMessage(amqpDeliveryOf(delivery)));
    }
    const byType = Object.fromEntries(ours.map((m) => [m.type, m]));
    expect(byType['order.created']).toMatchObject({
      key: KEY,
      contentType: 'application/json',
      payload: JSON.parse(ODD_JSON),
      headers: { tenant: 'Müller GmbH', traceparent: TRACEPARENT },
    });
    expect(Object.keys(byType['order.created']?.headers ?? {}).sort()).toEqual(['tenant', 'traceparent']);
    expect(byType['order.proto']).toMatchObject({ key: KEY, contentType: PROTOBUF });
    expect([...(byType['order.proto']?.payload as Uint8Array)]).toEqual([...BINARY]);
    expect(byType['order.noted']).toMatchObject({ key: null, payload: { z: 1, a: 'é' }, headers: { note: '50% "off"' } });
  }, 60_000);

  it('NATS JetStream, read with nats.c: exact data bytes, printable percent-encoded headers and CloudEvents attributes', async () => {
    const reader = join(scratch, 'nats_reader');
    await run('gcc', ['-Wall', '-Werror', '-o', reader, join(FOREIGN, 'nats_reader.c'), '-lnats'], { timeout: 60_000 });
    fixture = await createPostgresFixture();
    const admin = await natsAdmin();
    const prefix = uniqueName('w');
    const stream = await addStream(admin, prefix);
    cleanups.push(async () => {
      await admin.jsm.streams.delete(stream);
      await admin.close();
    });
    const publisher = createNatsPublisher({ servers: services.natsUrl, cloudEvents: { source: SOURCE } });
    cleanups.push(() => publisher.close());
    const topic = `${prefix}.orders`;
    const stored = await storeAndRelay(fixture, topic, publisher);

    const { stdout } = await run(reader, [services.natsUrl, stream, '3'], { timeout: 30_000 });
    const read = stdout
      .split('E\n')
      .filter((block) => block.trim() !== '')
      .map((block) => {
        const lines = block.trim().split('\n');
        const headers: Record<string, string> = {};
        for (const line of lines.filter((l) => l.startsWith('H '))) {
          const [, name, value] = line.split(' ');
          headers[Buffer.from(name ?? '', 'hex').toString('utf8')] = Buffer.from(value ?? '', 'hex').toString('latin1');
        }
        return { subject: lines[0]?.slice(2), dataHex: lines[1]?.slice(2) ?? '', headers };
      });
    expect(read).toHaveLength(3);
    for (const message of read) {
      const expected = stored.get(message.headers['Nats-Msg-Id'] ?? '') as Stored;
      expect(message.subject).toBe(topic);
      expect(message.dataHex).toBe(expected.bodyHex);
      // Printable ASCII, and no space but in Content-Type (a media type, read as it is).
      for (const [name, value] of Object.entries(message.headers)) expect(value).toMatch(name === 'Content-Type' ? /^[ -~]*$/ : /^[!-~]*$/);
      const producerHeaders = Object.fromEntries(Object.entries(expected.headers).map(([name, value]) => [name, encodeHeaderValue(value)]));
      expect(message.headers).toEqual({
        ...producerHeaders,
        'Nats-Msg-Id': expected.id,
        'Outbox-Id': expected.id,
        'Outbox-Type': expected.type,
        'Content-Type': expected.contentType,
        ...(expected.key === null ? {} : { 'Outbox-Key': 'Kunde%20M%C3%BCller%207', 'ce-subject': 'Kunde%20M%C3%BCller%207' }),
        'ce-specversion': '1.0',
        'ce-id': expected.id,
        'ce-source': SOURCE,
        'ce-type': expected.type,
        'ce-time': expected.time,
        'ce-datacontenttype': encodeHeaderValue(expected.contentType),
      });
    }
    const noted = read.find((m) => m.headers['ce-type'] === 'order.noted');
    expect(noted?.headers.note).toBe('50%25%20%22off%22');
    expect(read.find((m) => m.headers['ce-type'] === 'order.created')?.headers.tenant).toBe('M%C3%BCller%20GmbH');

    // Our own consumer decodes them back.
    const consumer = await jetstream(admin.nc).consumers.get(stream);
    const ours = [];
    for await (const message of await consumer.fetch({ max_messages: 3, expires: 5000 })) {
      ours.push(rebuildMessage(natsDeliveryOf(message, undefined)));
      message.ack();
      if (ours.length === 3) break;
    }
    const byType = Object.fromEntries(ours.map((m) => [m.type, m]));
    expect(byType['order.created']).toMatchObject({ key: KEY, payload: JSON.parse(ODD_JSON), headers: { tenant: 'Müller GmbH', traceparent: TRACEPARENT } });
    expect(Object.keys(byType['order.created']?.headers ?? {}).sort()).toEqual(['tenant', 'traceparent']);
    expect(byType['order.proto']).toMatchObject({ key: KEY, contentType: PROTOBUF });
    expect([...(byType['order.proto']?.payload as Uint8Array)]).toEqual([...BINARY]);
    expect(byType['order.noted']).toMatchObject({ key: null, headers: { note: '50% "off"' } });
  }, 90_000);
});
