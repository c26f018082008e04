import { inspect } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError, OutboxerError, PublishError } from '../../src/core/errors.js';
import { createNatsPublisher, NATS_DEFAULTS, resolveNatsPublisherOptions, type NatsPublisherOptions } from '../../src/publishers/nats/index.js';
import { describePublisherConformance, testMessage } from '../conformance/publisher-conformance.js';
import {
  addStream,
  eventually,
  freePort,
  natsAdmin,
  natsHarness,
  PrivateNatsServer,
  publisherPool,
  readStream,
  recordingLogger,
  waitForStream,
  type NatsAdmin,
} from '../support/nats-harness.js';
import { services, uniqueName } from '../support/services.js';

describePublisherConformance(natsHarness);

const settle = (promise: Promise<unknown>): Promise<unknown> => promise.then(() => undefined, (error: unknown) => error);

/** Every place a secret could surface from an error: message, stack, JSON, causes as util.inspect prints them. */
function everythingShown(error: unknown): string {
  return [String((error as Error).message), String((error as Error).stack), JSON.stringify(error), inspect(error, { depth: 10 })].join('\n');
}

describe('NATS publisher', () => {
  let admin: NatsAdmin;
  const pool = publisherPool();
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    admin = await natsAdmin();
  });
  afterEach(async () => {
    await pool.closeAll();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    await admin.close();
  });

  async function isolatedStream(config: Parameters<typeof addStream>[2] = {}): Promise<{ prefix: string; stream: string }> {
    const prefix = uniqueName('p');
    const stream = await addStream(admin, prefix, config);
    cleanups.push(() => admin.jsm.streams.delete(stream).then(() => undefined));
    return { prefix, stream };
  }

  const local = (extra: Partial<NatsPublisherOptions> = {}) => pool.make({ servers: services.natsUrl, publishTimeoutMs: 5000, ...extra });

  it('puts the message on the wire as documented: subject, body, Nats-Msg-Id and Outbox-* headers', async () => {
    const { prefix, stream } = await isolatedStream();
    const publisher = local();
    const keyed = testMessage(`${prefix}.orders.created`, { headers: { 'correlation-id': 'c-1', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
    const plain = testMessage(`${prefix}.orders.plain`, { key: null, headers: {} });
    await publisher.publish(keyed);
    await publisher.publish(plain);
    const [first, second] = await waitForStream(admin, stream, 2);
    expect(first).toEqual({
      id: keyed.id,
      topic: keyed.topic,
      type: 'order.created',
      key: 'order-1',
      body: keyed.body,
      bytes: expect.any(Uint8Array),
      contentType: 'application/json',
      headers: {
        'correlation-id': 'c-1',
        traceparent: keyed.headers.traceparent,
        'Nats-Msg-Id': keyed.id,
        'Outbox-Id': keyed.id,
        'Outbox-Type': 'order.created',
        'Outbox-Key': 'order-1',
        'Content-Type': 'application/json',
      },
    });
    expect(second?.key).toBeNull();
    expect(second?.headers).not.toHaveProperty('Outbox-Key');
    expect(second?.headers['Outbox-Id']).toBe(plain.id);
  });

  it('treats a duplicate PubAck as success: the stream keeps one copy (murmur #141)', async () => {
    const { prefix, stream } = await isolatedStream({ duplicate_window: 60_000_000_000 });
    const publisher = local();
    const message = testMessage(`${prefix}.dup`);
    await publisher.publish(message);
    await expect(publisher.publish(message)).resolves.toBeUndefined();
    await expect(publisher.publish({ ...message, attempts: 3 })).resolves.toBeUndefined();
    const info = await admin.jsm.streams.info(stream);
    expect(info.state.messages).toBe(1);
  });

  it('applies subjectPrefix in front of the topic', async () => {
    const { prefix, stream } = await isolatedStream();
    const publisher = local({ subjectPrefix: `${prefix}.tenant-a` });
    const message = testMessage('orders.created');
    await publisher.publish(message);
    const [received] = await waitForStream(admin, stream, 1);
    expect(received?.topic).toBe(`${prefix}.tenant-a.orders.created`);
    expect(received?.id).toBe(message.id);
  });

  it('fails with a retryable OUTBOXER_NO_STREAM that names the subject when no stream captures it', async () => {
    const publisher = local();
    const subject = `${uniqueName('nostream')}.orders`;
    const error = await settle(publisher.publish(testMessage(subject)));
    expect(error).toBeInstanceOf(PublishError);
    expect((error as PublishError).code).toBe('OUTBOXER_NO_STREAM');
    expect((error as PublishError).permanent).toBe(false);
    expect((error as Error).message).toContain(`"${subject}"`);
    expect((error as Error).message).toMatch(/create a stream/);
  });

  it("learns the server's max_payload into capabilities and fails a larger message permanently", async () => {
    const { prefix } = await isolatedStream();
    const publisher = local();
    expect(publisher.capabilities.maxMessageBytes).toBeUndefined();
    await publisher.publish(testMessage(`${prefix}.small`));
    const probe = await connect({ servers: services.natsUrl });
    const maxPayload = probe.info?.max_payload;
    await probe.close();
    expect(maxPayload).toBeGreaterThan(0);
    expect(publisher.capabilities.maxMessageBytes).toBe(maxPayload);
    expect(Object.isFrozen(publisher.capabilities)).toBe(true);

    const body = (bytes: number) => JSON.stringify('x'.repeat(bytes - 2));
    for (const payloadJson of [body((maxPayload as number) + 1), body((maxPayload as number) - 20)]) {
      // the second fits as a body, but not with its headers: max_payload counts both
      const error = await settle(publisher.publish(testMessage(`${prefix}.big`, { body: payloadJson })));
      expect(error).toBeInstanceOf(PublishError);
      expect((error as PublishError).code).toBe('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER');
      expect((error as PublishError).permanent).toBe(true);
    }
  });

  it('enforces maxMessageBytes before any round trip', async () => {
    const publisher = pool.make({ servers: `127.0.0.1:${await freePort()}`, maxMessageBytes: 100, publishTimeoutMs: 1000 });
    expect(publisher.capabilities.maxMessageBytes).toBe(100);
    const error = await settle(publisher.publish(testMessage('orders.big', { body: JSON.stringify('y'.repeat(200)) })));
    expect((error as PublishError).code).toBe('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER');
    expect((error as PublishError).permanent).toBe(true);
  });

  it("fails permanently over the stream's max_msg_size", async () => {
    const { prefix } = await isolatedStream({ max_msg_size: 512 });
    const publisher = local();
    await publisher.publish(testMessage(`${prefix}.fits`));
    const error = await settle(publisher.publish(testMessage(`${prefix}.big`, { body: JSON.stringify('z'.repeat(2000)) })));
    expect((error as PublishError).code).toBe('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER');
    expect((error as PublishError).permanent).toBe(true);
    expect((error as Error).message).toMatch(/max_msg_size/);
  });

  it('refuses permanently what NATS cannot carry or JetStream would act on', async () => {
    const { prefix, stream } = await isolatedStream();
    const publisher = local();
    const cases = [
      testMessage(`${prefix}.x`, { headers: { 'Nats-Rollup': 'all' } }),
      testMessage(`${prefix}.x`, { headers: { 'nats-expected-stream': 'other' } }),
      testMessage(`${prefix}.x`, { headers: { 'bad name': 'v' } }),
      testMessage(`${prefix}.x`, { headers: { ok: 'line\nbreak' } }),
      testMessage(`${prefix}..x`),
      testMessage(`${prefix}.*`),
      testMessage(`${prefix}.>`),
      testMessage('$JS.API.STREAM.DELETE.x'),
      testMessage(`${prefix}.x y`),
    ];
    for (const message of cases) {
      const error = await settle(publisher.publish(message));
      expect(error, JSON.stringify({ topic: message.topic, headers: message.headers })).toBeInstanceOf(PublishError);
      expect((error as PublishError).permanent).toBe(true);
    }
    expect((await admin.jsm.streams.info(stream)).state.messages).toBe(0);
  });

  it('lets its own Outbox-* and Content-Type headers win over message headers of the same name', async () => {
    const { prefix, stream } = await isolatedStream();
    const message = testMessage(`${prefix}.x`, { headers: { 'outbox-id': 'forged', 'Content-Type': 'text/plain', tenant: 'acme' } });
    await local().publish(message);
    const [received] = await waitForStream(admin, stream, 1);
    expect(received?.headers).toMatchObject({ 'Outbox-Id': message.id, 'Content-Type': 'application/json', tenant: 'acme' });
    expect(received?.headers).not.toHaveProperty('outbox-id');
  });

  describe('options', () => {
    it.each([
      [{}, 'servers'],
      [{ servers: '' }, 'servers[0]'],
      [{ servers: [] }, 'servers'],
      [{ servers: 'http://127.0.0.1:4222' }, 'servers[0]'],
      [{ servers: 'nats://127.0.0.1:4222/path' }, 'servers[0]'],
      [{ servers: ['nats://a:b@h1:4222', 'nats://c:d@h2:4222'] }, 'servers'],
      [{ servers: ['nats://h1:4222', 'tls://h2:4222'] }, 'servers'],
      [{ servers: services.natsUrl, subjectPrefix: 'has space' }, 'subjectPrefix'],
      [{ servers: services.natsUrl, subjectPrefix: 'orders.*' }, 'subjectPrefix'],
      [{ servers: services.natsUrl, subjectPrefix: 'orders.>' }, 'subjectPrefix'],
      [{ servers: services.natsUrl, subjectPrefix: 'a..b' }, 'subjectPrefix'],
      [{ servers: services.natsUrl, subjectPrefix: '$JS' }, 'subjectPrefix'],
      [{ servers: services.natsUrl, subjectPrefix: '' }, 'subjectPrefix'],
      [{ servers: services.natsUrl, publishTimeoutMs: 0 }, 'publishTimeoutMs'],
      [{ servers: services.natsUrl, publishTimeoutMs: 1.5 }, 'publishTimeoutMs'],
      [{ servers: services.natsUrl, connectTimeoutMs: -1 }, 'connectTimeoutMs'],
      [{ servers: services.natsUrl, maxMessageBytes: 0 }, 'maxMessageBytes'],
      [{ servers: services.natsUrl, name: '' }, 'name'],
      [{ servers: services.natsUrl, logger: {} }, 'logger'],
      [{ servers: services.natsUrl, publishTimeout: 5000 }, '"publishTimeout"'],
    ])('refuses %j, naming %s', (options, option) => {
      let error: unknown;
      try {
        createNatsPublisher(options as unknown as NatsPublisherOptions);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as ConfigurationError).code).toBe('OUTBOXER_INVALID_OPTION');
      expect((error as Error).message).toContain(`option ${option}`);
    });

    it('never echoes a password in an option error', () => {
      const secret = `canary-${Math.random().toString(36).slice(2)}`;
      for (const servers of [
        `http://u:${secret}@h:4222`,
        `nats://u:${secret}@h:4222/x`,
        [`nats://u:${secret}@h1`, 'nats://v:w@h2'],
        `nats://u:${secret}#x@h:4222`,
        `nats://u:12#${secret}@h:4222`,
        `nats://u:${secret}/x@h:4222`,
        `nats://u:${secret}%zz@h:4222`,
      ]) {
        let error: unknown;
        try {
          createNatsPublisher({ servers });
        } catch (caught) {
          error = caught;
        }
        expect(error).toBeInstanceOf(ConfigurationError);
        expect(everythingShown(error)).not.toContain(secret);
      }
    });

    it('resolves options once, frozen, with the credentials out of sight', () => {
      const secret = `canary-${Math.random().toString(36).slice(2)}`;
      const resolved = resolveNatsPublisherOptions({ servers: [`nats://relay:${secret}@127.0.0.1:4222`, `relay:${secret}@10.0.0.2`] });
      expect(Object.isFrozen(resolved)).toBe(true);
      expect(resolved.servers.map((s) => s.hostPort)).toEqual(['127.0.0.1:4222', '10.0.0.2:4222']);
      expect(resolved.auth).toEqual({ user: 'relay', pass: secret });
      expect(JSON.stringify(resolved)).not.toContain(secret);
      expect(inspect(resolved, { depth: 10 })).not.toContain(secret);
      expect(resolveNatsPublisherOptions({ servers: 'nats://tok3n-value@h' }).auth).toEqual({ token: 'tok3n-value' });
    });

    it('documents its defaults, and the factory neither connects nor throws while NATS is down', async () => {
      expect(NATS_DEFAULTS).toEqual({ publishTimeoutMs: 10_000, connectTimeoutMs: 10_000, name: 'outboxer' });
      const publisher = pool.make({ servers: [`127.0.0.1:${await freePort()}`] });
      expect(publisher.name).toBe('nats');
      expect(publisher.capabilities).toEqual({});
    });
  });

  describe('credentials', () => {
    const user = 'relay';
    const secret = `canary-${Math.random().toString(36).slice(2)}`;
    let server: PrivateNatsServer;
    beforeAll(async () => {
      server = await PrivateNatsServer.create({ user, pass: secret });
      await server.start();
      const privateAdmin = await natsAdmin(server.adminOptions());
      await privateAdmin.jsm.streams.add({ name: 'AUTH', subjects: ['auth.>'] });
      await privateAdmin.close();
    });
    afterAll(async () => {
      await server.destroy();
    });

    it('hands the URL credentials to the client and publishes', async () => {
      const publisher = pool.make({ servers: `nats://${user}:${encodeURIComponent(secret)}@127.0.0.1:${server.port}`, publishTimeoutMs: 5000 });
      await expect(publisher.publish(testMessage('auth.ok'))).resolves.toBeUndefined();
    });

    it('never shows the password in errors or logs when authentication fails or the server is gone', async () => {
      const logger = recordingLogger();
      const wrong = `${secret}-wrong`;
      const refused = pool.make({ servers: `nats://${user}:${wrong}@127.0.0.1:${server.port}`, publishTimeoutMs: 3000, connectTimeoutMs: 2000, logger });
      const authError = await settle(refused.publish(testMessage('auth.refused')));
      expect(authError).toBeInstanceOf(PublishError);
      expect((authError as PublishError).code).toBe('OUTBOXER_AUTH_FAILED'); // released uncounted by the relay, fatal at start
      expect((authError as PublishError).permanent).toBe(false);
      expect(everythingShown(authError)).not.toContain(wrong);
      expect((authError as Error).message).toContain(`nats://***:***@127.0.0.1:${server.port}`);

      const gone = pool.make({ servers: [`nats://${user}:${secret}@127.0.0.1:${await freePort()}`], publishTimeoutMs: 2000, connectTimeoutMs: 1000, logger });
      const goneError = await settle(gone.publish(testMessage('auth.gone')));
      expect(goneError).toBeInstanceOf(PublishError);
      expect(everythingShown(goneError)).not.toContain(secret);
      await refused.close();
      await gone.close();
      expect(logger.lines.join('\n')).not.toContain(secret);
    });
  });

  it('opens a new connection when the old one closed for good (credentials refused on reconnect)', async () => {
    const pass = `first-${Math.random().toString(36).slice(2)}`;
    const server = await PrivateNatsServer.create({ user: 'relay', pass });
    cleanups.push(() => server.destroy());
    await server.start();
    const setup = await natsAdmin(server.adminOptions());
    await setup.jsm.streams.add({ name: 'GOOD', subjects: ['good.>'] });
    await setup.close();
    const logger = recordingLogger();
    const publisher = pool.make({ servers: `nats://relay:${pass}@127.0.0.1:${server.port}`, publishTimeoutMs: 2000, connectTimeoutMs: 1000, logger });
    await publisher.publish(testMessage('good.one'));

    // Restarted with other credentials: the client's reconnects are refused and it gives up for good.
    await server.kill();
    server.auth = { user: 'relay', pass: 'rotated-password' };
    await server.start();
    await eventually(() => logger.lines.some((line) => line.includes('closed; the next publish opens a new one')), 20_000, 'the client to give up');
    const refused = await settle(publisher.publish(testMessage('good.refused')));
    expect((refused as PublishError).code).toBe('OUTBOXER_AUTH_FAILED'); // a rotated password: released uncounted, as an outage is

    // Back to the credentials the publisher holds: the next publish connects afresh.
    await server.kill();
    server.auth = { user: 'relay', pass };
    await server.start();
    const message = testMessage('good.two');
    await eventually(() => publisher.publish(message).then(() => true), 20_000, 'a new connection');
    expect(logger.lines.join('\n')).not.toContain(pass);
  });

  describe('against a private nats-server that the tests freeze, kill and restart', () => {
    let server: PrivateNatsServer;
    let privateAdmin: NatsAdmin | undefined;
    beforeAll(async () => {
      server = await PrivateNatsServer.create();
      await server.start();
      privateAdmin = await natsAdmin(server.adminOptions());
      await privateAdmin.jsm.streams.add({ name: 'PRIV', subjects: ['priv.>'], duplicate_window: 120_000_000_000 });
    });
    afterEach(async () => {
      server.thaw();
      await pool.closeAll();
      if (privateAdmin === undefined || privateAdmin.nc.isClosed()) {
        await server.kill();
        await server.start();
        privateAdmin = await natsAdmin(server.adminOptions());
      }
    });
    afterAll(async () => {
      await privateAdmin?.close();
      await server.destroy();
    });

    const storedIds = async (): Promise<Set<string>> => new Set((await readStream(privateAdmin as NatsAdmin, 'PRIV')).map((m) => m.id));

    it('makes one connection for many concurrent first publishes, named by the name option', async () => {
      const name = uniqueName('conn');
      const publisher = pool.make({ servers: server.url, name, publishTimeoutMs: 5000 });
      await Promise.all(Array.from({ length: 50 }, (_, i) => publisher.publish(testMessage('priv.concurrent', { key: `k${i}` }))));
      const mine = (await server.connections()).filter((c) => c.name === name);
      expect(mine).toHaveLength(1);
    });

    it('times out while the server answers nothing, and the retry after it thaws is deduplicated (nats.node #628)', async () => {
      const publisher = pool.make({ servers: server.url, publishTimeoutMs: 1500 });
      await publisher.publish(testMessage('priv.warmup'));
      const message = testMessage('priv.frozen');
      await server.freeze();
      const started = performance.now();
      const error = await settle(publisher.publish(message));
      const elapsed = performance.now() - started;
      server.thaw();
      expect(error).toBeInstanceOf(PublishError);
      expect((error as PublishError).code).toBe('OUTBOXER_PUBLISH_TIMEOUT');
      expect((error as PublishError).permanent).toBe(false);
      expect(elapsed).toBeLessThan(1500 + 10_000); // the timer ended it (the code says so), with room for a loaded machine
      await eventually(() => publisher.publish(message).then(() => true), 10_000, 'the retry to be confirmed');
      const copies = (await readStream(privateAdmin as NatsAdmin, 'PRIV')).filter((m) => m.id === message.id);
      expect(copies).toHaveLength(1);
    });

    it('rejects in-flight publishes when the server dies, does not hang while it is down, and resumes after a restart', async () => {
      const timeoutMs = 3000;
      const logger = recordingLogger();
      const publisher = pool.make({ servers: server.url, publishTimeoutMs: timeoutMs, logger });
      await publisher.publish(testMessage('priv.before'));
      await privateAdmin?.close();

      // Frozen first so that nothing in flight can be acknowledged, then killed under them.
      await server.freeze();
      const inFlight = Array.from({ length: 20 }, (_, i) => testMessage('priv.inflight', { key: `k${i}` }));
      const started = performance.now();
      const outcomes = inFlight.map((m) => settle(publisher.publish(m)));
      await server.kill();
      const errors = await Promise.all(outcomes);
      // A PubAck lost with its connection never comes: they fail when it drops, not at the timeout.
      expect(performance.now() - started).toBeLessThan(timeoutMs);
      for (const error of errors) {
        expect(error).toBeInstanceOf(PublishError);
        expect((error as PublishError).permanent).toBe(false);
        expect((error as PublishError).code).toBe('OUTBOXER_BROKER_UNAVAILABLE');
        expect((error as Error).message).toMatch(/lost before the PubAck/);
      }

      const during = performance.now();
      const outage = await settle(publisher.publish(testMessage('priv.outage')));
      expect(performance.now() - during).toBeLessThan(timeoutMs + 1000);
      expect(outage).toBeInstanceOf(PublishError);
      expect((outage as PublishError).permanent).toBe(false);

      await server.start();
      const after = testMessage('priv.after');
      await eventually(() => publisher.publish(after).then(() => true), 20_000, 'publishing to resume on the same publisher');
      await Promise.all(inFlight.map((m) => publisher.publish(m)));
      privateAdmin = await natsAdmin(server.adminOptions());
      const ids = await storedIds();
      for (const m of [...inFlight, after]) expect(ids.has(m.id)).toBe(true);
      expect(logger.lines.some((line) => line.includes('reconnected'))).toBe(true);
    });

    it('starts while NATS is down and connects on a later publish', async () => {
      await privateAdmin?.close();
      await server.kill();
      const publisher = pool.make({ servers: server.url, publishTimeoutMs: 2000, connectTimeoutMs: 1000 });
      const down = await settle(publisher.publish(testMessage('priv.down')));
      expect(down).toBeInstanceOf(PublishError);
      expect((down as PublishError).code).toBe('OUTBOXER_BROKER_UNAVAILABLE');
      expect((down as PublishError).permanent).toBe(false);
      await server.start();
      privateAdmin = await natsAdmin(server.adminOptions());
      const message = testMessage('priv.up');
      await eventually(() => publisher.publish(message).then(() => true), 20_000, 'the first successful connection');
      expect((await storedIds()).has(message.id)).toBe(true);
    });
  });

  it('close waits for publishes in flight, then refuses with OUTBOXER_CLOSED; closing twice is fine', async () => {
    const { prefix, stream } = await isolatedStream();
    const publisher = local();
    await publisher.publish(testMessage(`${prefix}.warm`));
    const batch = Array.from({ length: 50 }, () => testMessage(`${prefix}.closing`, { key: null }));
    const publishing = Promise.all(batch.map((m) => publisher.publish(m)));
    const closing = publisher.close();
    await expect(publishing).resolves.toBeDefined();
    await closing;
    expect((await admin.jsm.streams.info(stream)).state.messages).toBe(51);
    const error = await settle(publisher.publish(testMessage(`${prefix}.late`)));
    expect(error).toBeInstanceOf(OutboxerError);
    expect((error as OutboxerError).code).toBe('OUTBOXER_CLOSED');
    await expect(publisher.close()).resolves.toBeUndefined();
  });
});
