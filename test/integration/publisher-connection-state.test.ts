import { connect, createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { BrokerConnectionState } from '../../src/core/relay-health.js';
import type { Publisher } from '../../src/core/ports.js';
import { createNatsPublisher } from '../../src/brokers/nats/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import { testMessage } from '../conformance/publisher-conformance.js';
import { settle } from '../support/captured-errors.js';
import { addStream, freePort, natsAdmin, PrivateNatsServer } from '../support/nats-harness.js';
import { brokerPort, closedPort, forceCloseConnectionsNamed, isolatedExchange } from '../support/rabbitmq-harness.js';
import { services, uniqueName } from '../support/services.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

const stateOf = (publisher: Publisher): BrokerConnectionState | 'unknown' => publisher.connectionState?.() ?? 'unknown';

describe('Publisher.connectionState(), read from memory', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const track = (publisher: Publisher): Publisher => {
    cleanups.push(() => publisher.close());
    return publisher;
  };

  describe('RabbitMQ', () => {
    it('connecting before the first connection, connected after verify, disconnected when the broker closes it, connected after the next publish, disconnected once closed', async () => {
      const exchange = await isolatedExchange();
      cleanups.push(() => exchange.cleanup());
      const clientName = uniqueName('ox_state');
      const publisher = track(createRabbitMqPublisher({ url: services.amqpUrl, exchange: exchange.exchange, clientName }));
      expect(stateOf(publisher)).toBe('connecting');
      await publisher.verify?.();
      expect(stateOf(publisher)).toBe('connected');

      expect(await forceCloseConnectionsNamed(clientName)).toBe(1);
      await waitFor(() => stateOf(publisher) === 'disconnected', { what: 'the loss seen' });

      await publisher.publish(testMessage(exchange.topic('again')));
      expect(stateOf(publisher)).toBe('connected');
      await publisher.close();
      expect(stateOf(publisher)).toBe('disconnected');
    });

    it('an idle publisher reconnects by itself after a loss: connected again with no publish, so an idle relay is ready again', async () => {
      const exchange = await isolatedExchange();
      cleanups.push(() => exchange.cleanup());
      const clientName = uniqueName('ox_idle');
      const publisher = track(createRabbitMqPublisher({ url: services.amqpUrl, exchange: exchange.exchange, clientName }));
      await publisher.verify?.();
      expect(await forceCloseConnectionsNamed(clientName)).toBe(1);
      await waitFor(() => stateOf(publisher) !== 'connected', { what: 'the loss seen' });
      await waitFor(() => stateOf(publisher) === 'connected', { timeoutMs: 10_000, what: 'the background reconnect' });
      await publisher.publish(testMessage(exchange.topic('after')));
      expect(stateOf(publisher)).toBe('connected');
    });

    it('a broker out of reach: disconnected after the first failed attempt, and it stays so while publishes retry', async () => {
      const publisher = track(
        createRabbitMqPublisher({ url: `amqp://guest:guest@127.0.0.1:${await closedPort()}`, connectTimeoutMs: 1000, confirmTimeoutMs: 2000 }),
      );
      expect(stateOf(publisher)).toBe('connecting');
      await expect(publisher.verify?.()).rejects.toMatchObject({ code: 'OUTBOXER_BROKER_UNAVAILABLE' });
      expect(stateOf(publisher)).toBe('disconnected');
      await settle(publisher.publish(testMessage('a.b')));
      expect(stateOf(publisher)).toBe('disconnected');
    });

    it('after a loss, connecting while the first reconnect runs; disconnected when it fails; connected when the network is back', async () => {
      const exchange = await isolatedExchange();
      cleanups.push(() => exchange.cleanup());
      const proxy = await TcpProxy.start(brokerPort);
      cleanups.push(() => proxy.close());
      const publisher = track(
        createRabbitMqPublisher({
          url: `amqp://guest:guest@127.0.0.1:${proxy.port}`,
          exchange: exchange.exchange,
          connectTimeoutMs: 1000,
          confirmTimeoutMs: 3000,
        }),
      );
      await publisher.verify?.();
      expect(stateOf(publisher)).toBe('connected');

      proxy.setMode('blackhole'); // new connections are accepted and never answered
      proxy.resetAll();
      await waitFor(() => stateOf(publisher) === 'disconnected', { what: 'the loss seen' });
      const reconnecting = settle(publisher.publish(testMessage(exchange.topic('x'))));
      expect(stateOf(publisher)).toBe('connecting');
      await reconnecting; // the attempt times out (connectTimeoutMs)
      expect(stateOf(publisher)).toBe('disconnected');

      proxy.setMode('forward');
      await waitFor(async () => (await settle(publisher.publish(testMessage(exchange.topic('y'))))) === undefined, { what: 'a publish through again' });
      expect(stateOf(publisher)).toBe('connected');
    });

    it('started while the broker is out of reach: verify rejects, then it connects by itself (no publish) once the broker is back', async () => {
      const exchange = await isolatedExchange();
      cleanups.push(() => exchange.cleanup());
      const gate = await silentGate(brokerPort);
      cleanups.push(() => gate.close());
      const publisher = track(
        createRabbitMqPublisher({ url: `amqp://guest:guest@127.0.0.1:${gate.port}`, exchange: exchange.exchange, connectTimeoutMs: 500 }),
      );
      await expect(publisher.verify?.()).rejects.toMatchObject({ code: 'OUTBOXER_BROKER_UNAVAILABLE' });
      expect(stateOf(publisher)).toBe('disconnected');
      await waitFor(() => gate.accepted() >= 2, { timeoutMs: 10_000, what: 'a background attempt after the failed first one' });
      expect(stateOf(publisher)).toBe('disconnected');

      gate.open();
      await waitFor(() => stateOf(publisher) === 'connected', { timeoutMs: 15_000, what: 'the background reconnect' });
      expect(gate.accepted()).toBeLessThan(6); // spaced by the backoff, not a storm
      await publisher.close();
      expect(stateOf(publisher)).toBe('disconnected');
      await waitFor(() => gate.openConnections() === 0, { what: 'the connection closed' });
    });

    it('closed while out of reach: the pending background reconnect is cancelled', async () => {
      await expectNoReconnectAfterClose((port) => createRabbitMqPublisher({ url: `amqp://guest:guest@127.0.0.1:${port}`, connectTimeoutMs: 500 }), brokerPort);
    });
  });

  describe('NATS', () => {
    it('connecting before the first connection, connected after verify, disconnected once closed', async () => {
      const admin = await natsAdmin();
      const prefix = uniqueName('p');
      const stream = await addStream(admin, prefix);
      cleanups.push(async () => {
        await admin.jsm.streams.delete(stream);
        await admin.close();
      });
      const publisher = track(createNatsPublisher({ servers: services.natsUrl, publishTimeoutMs: 5000 }));
      expect(stateOf(publisher)).toBe('connecting');
      await publisher.verify?.();
      expect(stateOf(publisher)).toBe('connected');
      await publisher.publish(testMessage(`${prefix}.one`));
      expect(stateOf(publisher)).toBe('connected');
      await publisher.close();
      expect(stateOf(publisher)).toBe('disconnected');
    });

    it('a server out of reach: disconnected after the failed first attempt', async () => {
      const publisher = track(createNatsPublisher({ servers: `nats://127.0.0.1:${await freePort()}`, publishTimeoutMs: 2000, connectTimeoutMs: 1000 }));
      expect(stateOf(publisher)).toBe('connecting');
      await expect(publisher.verify?.()).rejects.toMatchObject({ code: 'OUTBOXER_BROKER_UNAVAILABLE' });
      expect(stateOf(publisher)).toBe('disconnected');
    });

    it('follows the client through a server restart: disconnected once its reconnects fail, connected once it is back', async () => {
      const server = await PrivateNatsServer.create();
      cleanups.push(() => server.destroy());
      await server.start();
      const publisher = track(createNatsPublisher({ servers: server.url, publishTimeoutMs: 2000, connectTimeoutMs: 1000 }));
      await publisher.verify?.();
      expect(stateOf(publisher)).toBe('connected');

      // the server's port now answers every reconnect attempt with a close: each attempt shows as one accept
      await server.kill();
      const refusing = await closingListener(server.port);
      cleanups.push(() => refusing.close());
      await waitFor(() => refusing.accepted() >= 3, { timeoutMs: 20_000, what: 'three reconnect attempts' });
      expect(stateOf(publisher)).toBe('disconnected');

      await refusing.close();
      await server.start();
      await waitFor(() => stateOf(publisher) === 'connected', { timeoutMs: 20_000, what: 'the client reconnected' });
    });

    it('started while the server is out of reach: verify rejects, then it connects by itself (no publish) once the server is back', async () => {
      const gate = await silentGate(natsPort);
      cleanups.push(() => gate.close());
      const publisher = track(createNatsPublisher({ servers: `nats://127.0.0.1:${gate.port}`, connectTimeoutMs: 500, publishTimeoutMs: 2000 }));
      await expect(publisher.verify?.()).rejects.toMatchObject({ code: 'OUTBOXER_BROKER_UNAVAILABLE' });
      // verify gives up at connectTimeoutMs, the client's own attempt a moment later
      await waitFor(() => stateOf(publisher) === 'disconnected', { what: 'the failed first attempt' });
      await waitFor(() => gate.accepted() >= 2, { timeoutMs: 10_000, what: 'a background attempt after the failed first one' });
      expect(stateOf(publisher)).toBe('disconnected');

      gate.open();
      await waitFor(() => stateOf(publisher) === 'connected', { timeoutMs: 15_000, what: 'the background reconnect' });
      expect(gate.accepted()).toBeLessThan(6); // spaced by the backoff, not a storm
      await publisher.close();
      expect(stateOf(publisher)).toBe('disconnected');
      await waitFor(() => gate.openConnections() === 0, { what: 'the connection closed' });
    });

    it('closed while out of reach: the pending background reconnect is cancelled', async () => {
      await expectNoReconnectAfterClose(
        (port) => createNatsPublisher({ servers: `nats://127.0.0.1:${port}`, connectTimeoutMs: 500, publishTimeoutMs: 2000 }),
        natsPort,
      );
    });
  });
});

const natsPort = Number(new URL(services.natsUrl).port || 4222);

/**
 * Two publishers out of reach, each behind its own silent gate; one is closed right after its failed verify. By the
 * time the other made two background attempts (1 s, then 2 s after a failure), the closed one would have made one.
 */
async function expectNoReconnectAfterClose(create: (port: number) => Publisher, targetPort: number): Promise<void> {
  const closedGate = await silentGate(targetPort);
  const controlGate = await silentGate(targetPort);
  const closedOne = create(closedGate.port);
  const control = create(controlGate.port);
  try {
    const verified = await Promise.all([settle(Promise.resolve(closedOne.verify?.())), settle(Promise.resolve(control.verify?.()))]);
    expect(verified.map((error) => (error as { code?: unknown } | undefined)?.code)).toEqual(['OUTBOXER_BROKER_UNAVAILABLE', 'OUTBOXER_BROKER_UNAVAILABLE']);
    await closedOne.close();
    expect(closedGate.accepted()).toBe(1);
    await waitFor(() => controlGate.accepted() >= 3, { timeoutMs: 15_000, what: 'two background attempts of the open publisher' });
    expect(closedGate.accepted()).toBe(1);
    expect(stateOf(closedOne)).toBe('disconnected');
  } finally {
    await Promise.all([closedOne.close(), control.close()]);
    await Promise.all([closedGate.close(), controlGate.close()]);
  }
}

/**
 * A listener that accepts connections and says nothing (a broker that is down or out of reach: each attempt times
 * out) until `open()`, then forwards new connections to `targetPort`; counts every connection it accepts.
 */
async function silentGate(targetPort: number): Promise<{ port: number; accepted(): number; openConnections(): number; open(): void; close(): Promise<void> }> {
  let accepted = 0;
  let forwarding = false;
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  };
  const server = createServer((client) => {
    accepted++;
    track(client);
    if (!forwarding) return;
    const upstream = connect(targetPort, '127.0.0.1');
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  let closed: Promise<void> | undefined;
  return {
    port,
    accepted: () => accepted,
    openConnections: () => sockets.size,
    open() {
      forwarding = true;
      for (const socket of sockets) socket.destroy(); // the attempts left hanging fail now
    },
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      });
      return closed;
    },
  };
}

/** A listener on `port` that closes every connection at once, counting them. */
async function closingListener(port: number): Promise<{ accepted(): number; close(): Promise<void> }> {
  let accepted = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  let closed: Promise<void> | undefined;
  return {
    accepted: () => accepted,
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      });
      return closed;
    },
  };
}
