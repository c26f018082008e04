import { inspect } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError, OutboxerError, PublishError } from '../../src/core/errors.js';
import { createNatsPublisher, NATS_DEFAULTS, resolveNatsPublisherOptions, type NatsPublisherOptions } from '../../src/brokers/nats/index.js';
import { testMessage } from '../conformance/publisher-conformance.js';
import { settle } from '../support/captured-errors.js';
import { freePort, natsAdmin, PrivateNatsServer, recordingLogger } from '../support/nats-harness.js';
import { natsPublisherFixtures } from '../support/nats-publisher-fixtures.js';
import { services } from '../support/services.js';

/** Every place a secret could surface from an error: message, stack, JSON, causes as util.inspect prints them. */
function everythingShown(error: unknown): string {
  return [String((error as Error).message), String((error as Error).stack), JSON.stringify(error), inspect(error, { depth: 10 })].join('\n');
}

describe('NATS publisher', () => {
  const { admin, pool, isolatedStream, local } = natsPublisherFixtures();

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
