import { execFile } from 'node:child_process';
import { inspect, promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import type { Publisher } from '../../src/core/ports.js';
import { failureAction } from '../../src/core/publish-failure.js';
import { createRedisPublisher, type RedisPublisherOptions } from '../../src/brokers/redis/index.js';
import { describePublisherConformance, testMessage } from '../conformance/publisher-conformance.js';
import { settle } from '../support/captured-errors.js';
import { dropPrefix, received, recordingLogger, redisAdmin, type RedisAdmin, redisHarness, redisUrl, xrange } from '../support/redis-harness.js';
import { redisRig } from '../support/redis-rig.js';
import { uniqueName } from '../support/services.js';
import { waitFor } from '../support/wait-for.js';

const run = promisify(execFile);

describePublisherConformance(redisHarness);

/** Every place a secret could surface from an error: message, stack, JSON, causes as util.inspect prints them. */
function everythingShown(error: unknown): string {
  return [String((error as Error).message), String((error as Error).stack), JSON.stringify(error), inspect(error, { depth: 10 })].join('\n');
}

/** The double-quoted strings of redis-cli's XRANGE output, unescaped to their bytes (redis-cli prints binary as \xHH). */
function cliStrings(output: string): Buffer[] {
  const strings: Buffer[] = [];
  for (const match of output.matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
    const bytes: number[] = [];
    const text = match[1] ?? '';
    for (let i = 0; i < text.length; i++) {
      const c = text[i] as string;
      if (c !== '\\') {
        bytes.push(...Buffer.from(c, 'utf8'));
        continue;
      }
      const next = text[++i] as string;
      if (next === 'x') {
        bytes.push(Number.parseInt(text.slice(i + 1, i + 3), 16));
        i += 2;
      } else bytes.push(({ n: 10, r: 13, t: 9, a: 7, b: 8 } as Record<string, number>)[next] ?? next.charCodeAt(0));
    }
    strings.push(Buffer.from(bytes));
  }
  return strings;
}

describe('Redis publisher', () => {
  let admin: RedisAdmin;
  const prefixes: string[] = [];
  const publishers: Publisher[] = [];
  const make = (options: Partial<RedisPublisherOptions> = {}) => {
    const streamPrefix = `${uniqueName('rp')}:`;
    prefixes.push(streamPrefix);
    const publisher = createRedisPublisher({ url: redisUrl, streamPrefix, publishTimeoutMs: 3000, connectTimeoutMs: 2000, ...options });
    publishers.push(publisher);
    return { publisher, streamPrefix };
  };
  beforeAll(async () => {
    admin = await redisAdmin();
  });
  afterEach(async () => {
    await Promise.all(publishers.splice(0).map((p) => p.close()));
    for (const prefix of prefixes.splice(0)) await dropPrefix(admin, prefix);
  });
  afterAll(() => {
    admin.destroy();
  });

  it('writes the documented fields in order: id, type, key, content-type, h:<header>..., body; the stream is prefix + topic', async () => {
    const { publisher, streamPrefix } = make();
    const message = testMessage('orders.created', {
      headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tenant: 'Müller GmbH' },
    });
    await publisher.publish(message);
    expect(await admin.exists('orders.created')).toBe(0);
    const [entry] = await xrange(admin, `${streamPrefix}orders.created`);
    expect(entry?.fields.map(([name, value]) => [name, value.toString('utf8')])).toEqual([
      ['id', message.id],
      ['type', 'order.created'],
      ['key', 'order-1'],
      ['content-type', 'application/json'],
      ['h:traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'],
      ['h:tenant', 'Müller GmbH'],
      ['body', message.body as string],
    ]);
    expect(entry?.entryId).toMatch(/^\d+-\d+$/);
  });

  it('leaves the key field out when the message has none', async () => {
    const { publisher, streamPrefix } = make();
    await publisher.publish(testMessage('orders.nokey', { key: null, headers: {} }));
    const [entry] = await xrange(admin, `${streamPrefix}orders.nokey`);
    expect(entry?.fields.map(([name]) => name)).toEqual(['id', 'type', 'content-type', 'body']);
  });

  it('stores every byte value of a binary body exactly, and redis-cli (a client we did not write) reads the fields and the exact body', async () => {
    const { publisher, streamPrefix } = make();
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const message = testMessage('blobs.all', {
      body: bytes,
      contentType: 'application/x-protobuf',
      headers: { note: '50% "off"\nnope'.split('\n')[0] as string },
    });
    await publisher.publish(message);
    const [entry] = await xrange(admin, `${streamPrefix}blobs.all`);
    expect([...(new Map(entry?.fields).get('body') ?? [])]).toEqual([...bytes]);

    const { stdout } = await run('redis-cli', ['--no-raw', '-u', redisUrl, 'XRANGE', `${streamPrefix}blobs.all`, '-', '+'], { encoding: 'utf8' });
    const [entryId, ...flat] = cliStrings(stdout);
    expect(entryId?.toString()).toBe(entry?.entryId);
    const fields = new Map<string, Buffer>();
    for (let i = 0; i + 1 < flat.length; i += 2) fields.set((flat[i] as Buffer).toString('utf8'), flat[i + 1] as Buffer);
    expect([...fields.keys()]).toEqual(['id', 'type', 'key', 'content-type', 'h:note', 'body']);
    expect(fields.get('id')?.toString()).toBe(message.id);
    expect(fields.get('content-type')?.toString()).toBe('application/x-protobuf');
    expect(fields.get('h:note')?.toString()).toBe('50% "off"');
    expect([...(fields.get('body') ?? [])]).toEqual([...bytes]);
  });

  it("keeps a key's order in its stream and takes hundreds of publishes in flight at once on one connection", async () => {
    const clientName = uniqueName('one-connection');
    const { publisher, streamPrefix } = make({ clientName });
    const ordered = Array.from({ length: 50 }, (_, i) => testMessage('orders.ordered', { key: 'same', seq: String(i) }));
    for (const message of ordered) await publisher.publish(message);
    const burst = Array.from({ length: 2000 }, (_, i) => testMessage('orders.burst', { key: `k${i % 13}` }));
    await Promise.all(burst.map((message) => publisher.publish(message)));
    const inStream = (await xrange(admin, `${streamPrefix}orders.ordered`)).map((entry) => received(`${streamPrefix}orders.ordered`, streamPrefix, entry).id);
    expect(inStream).toEqual(ordered.map((message) => message.id));
    expect(await admin.xLen(`${streamPrefix}orders.burst`)).toBe(2000);
    const clients = (await admin.clientList()).filter((client) => String(client.name) === clientName);
    expect(clients.length).toBe(1);
  });

  it('trims with MAXLEN ~: the stream stays near maxLen, never below it', async () => {
    const { publisher, streamPrefix } = make({ maxLen: 100 });
    for (let round = 0; round < 10; round++) {
      await Promise.all(Array.from({ length: 100 }, () => publisher.publish(testMessage('orders.trimmed', { key: null }))));
    }
    const length = await admin.xLen(`${streamPrefix}orders.trimmed`);
    expect(length).toBeGreaterThanOrEqual(100);
    expect(length).toBeLessThan(1000);
    // approximate trimming removes whole nodes (stream-node-max-entries, 100 by default): at most one node's worth over
    expect(length).toBeLessThanOrEqual(200);
  });

  it('fails with OUTBOXER_NO_STREAM (the relay pauses the topic) when the key holds another type', async () => {
    const { publisher, streamPrefix } = make();
    await admin.set(`${streamPrefix}orders.string`, 'not a stream');
    const message = testMessage('orders.string');
    const error = await settle(publisher.publish(message));
    expect(error).toBeInstanceOf(PublishError);
    expect((error as PublishError).code).toBe('OUTBOXER_NO_STREAM');
    expect(failureAction(error)).toBe('pause-topic');
    expect((error as Error).message).toContain(message.id);
    expect((error as Error).message).toContain(`${streamPrefix}orders.string`);
    expect((error as Error).message).toMatch(/rename or delete/);
  });

  it('fails a body over maxMessageBytes permanently without sending it', async () => {
    const { publisher, streamPrefix } = make({ maxMessageBytes: 16 });
    expect(publisher.capabilities.maxMessageBytes).toBe(16);
    const error = await settle(publisher.publish(testMessage('orders.big', { body: JSON.stringify('x'.repeat(40)) })));
    expect((error as PublishError).code).toBe('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER');
    expect((error as PublishError).permanent).toBe(true);
    expect(await admin.exists(`${streamPrefix}orders.big`)).toBe(0);
  });

  it('reports its connection: connecting before the first, connected after verify(), disconnected after close', async () => {
    const { publisher } = make();
    expect(publisher.connectionState?.()).toBe('connecting');
    await publisher.verify?.();
    expect(publisher.connectionState?.()).toBe('connected');
    await publisher.close();
    expect(publisher.connectionState?.()).toBe('disconnected');
  });

  it('waitReplicas: WAIT after XADD; with no replica attached the publish fails as a timeout once waitTimeoutMs passed, though the primary has the entry', async () => {
    expect((await admin.info('replication')).toString()).toMatch(/connected_slaves:0/);
    const { publisher, streamPrefix } = make({ waitReplicas: 1, waitTimeoutMs: 300, publishTimeoutMs: 3000 });
    const message = testMessage('orders.replicated');
    const started = performance.now();
    const error = await settle(publisher.publish(message));
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(error).toBeInstanceOf(PublishError);
    expect((error as PublishError).code).toBe('OUTBOXER_PUBLISH_TIMEOUT');
    expect((error as PublishError).permanent).toBe(false);
    expect((error as Error).message).toMatch(/only 0 of 1 replicas/);
    expect((await xrange(admin, `${streamPrefix}orders.replicated`)).length).toBe(1);

    // waitReplicas 0 (the default) sends no WAIT
    const { publisher: plain } = make();
    await expect(plain.publish(testMessage('orders.replicated'))).resolves.toBeUndefined();
  });

  it('never shows the password: not in errors, logs or the resolved options', async () => {
    const secret = `canary-${Math.random().toString(36).slice(2)}`;
    const logger = recordingLogger();
    const { publisher } = make({ url: `redis://outboxer:${secret}@127.0.0.1:6379`, logger });
    const error = await settle(publisher.publish(testMessage('orders.secret')));
    expect((error as PublishError).code).toBe('OUTBOXER_AUTH_FAILED');
    expect(failureAction(error)).toBe('release');
    expect(everythingShown(error)).not.toContain(secret);
    expect(logger.lines.join('\n')).not.toContain(secret);
    expect(logger.lines.length).toBeGreaterThan(0);
  });
});

describe('the Redis broker rig', () => {
  it("records every entry's id in stream order per stream, and its publisher writes under the rig's prefix", async () => {
    const rig = await redisRig();
    try {
      const publisher = rig.publisher();
      const a = Array.from({ length: 20 }, () => testMessage(rig.topic('a'), { key: 'a' }));
      const b = Array.from({ length: 5 }, () => testMessage(rig.topic('b'), { key: 'b' }));
      for (const message of [...a, ...b]) await publisher.publish(message);
      await waitFor(() => rig.deliveries.length >= 25, { what: '25 deliveries' });
      expect(rig.deliveries.filter((id) => a.some((m) => m.id === id))).toEqual(a.map((m) => m.id));
      expect(rig.deliveries.filter((id) => b.some((m) => m.id === id))).toEqual(b.map((m) => m.id));
      expect(rig.cliArgs().slice(0, 4)).toEqual(['--publisher', 'redis', '--broker-url', redisUrl]);
    } finally {
      await rig.cleanup();
    }
  });
});
