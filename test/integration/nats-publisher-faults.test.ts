import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import { testMessage } from '../conformance/publisher-conformance.js';
import { settle } from '../support/captured-errors.js';
import { eventually, natsAdmin, PrivateNatsServer, readStream, recordingLogger, type NatsAdmin } from '../support/nats-harness.js';
import { natsPublisherFixtures } from '../support/nats-publisher-fixtures.js';
import { uniqueName } from '../support/services.js';

describe('NATS publisher', () => {
  const { pool, cleanups } = natsPublisherFixtures();

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
      // What happened, and where; what comes next (released, retried or parked) is the relay's to say.
      expect((down as Error).message).toMatch(/^cannot connect to NATS at nats:\/\/127\.0\.0\.1:\d+ \(/);
      expect((down as Error).message).not.toMatch(/retried/);
      await server.start();
      privateAdmin = await natsAdmin(server.adminOptions());
      const message = testMessage('priv.up');
      await eventually(() => publisher.publish(message).then(() => true), 20_000, 'the first successful connection');
      expect((await storedIds()).has(message.id)).toBe(true);
    });
  });
});
