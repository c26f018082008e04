/**
 * The RabbitMQ publisher's socket writes (`writeCoalescer`), against the real broker: amqplib writes each publish on a
 * socket without Nagle's delay as a system call of its own; what one turn of the event loop publishes must leave in a
 * few writes, still confirmed and delivered in publish order.
 */
import type { Socket } from 'node:net';
import amqp from 'amqplib';
import { describe, expect, it } from 'vitest';
import { socketOf, writeCoalescer } from '../../src/brokers/rabbitmq/write-coalescer.js';
import { testMessage } from '../conformance/publisher-conformance.js';
import { rabbitMqPublisherFixtures } from '../support/rabbitmq-publisher-fixtures.js';
import { services, uniqueName } from '../support/services.js';

const { track, exchangeFixture, publisherFor } = rabbitMqPublisherFixtures();
const MESSAGES = 200;

/** Counts the socket's writes to the kernel (each `_write` or `_writev` is one). */
function countWrites(socket: Socket): () => number {
  let writes = 0;
  const target = socket as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
  for (const name of ['_write', '_writev'] as const) {
    const original = target[name].bind(socket);
    target[name] = (...args: unknown[]) => {
      writes++;
      return original(...args);
    };
  }
  return () => writes;
}

/** Turns of the event loop (`setImmediate` callbacks) until `stop()`. */
function countTurns(): { stop(): number } {
  let turns = 0;
  let running = true;
  const turn = () => {
    turns++;
    if (running) setImmediate(turn);
  };
  setImmediate(turn);
  return {
    stop() {
      running = false;
      return turns;
    },
  };
}

/**
 * Publishes `count` messages of `bodyBytes` in one turn on a confirm channel of its own (no delay, as the publisher's
 * socket), through the coalescer or not. Returns the socket's writes to the kernel, and the turns of the loop until
 * the socket had handed all of them to the kernel.
 */
async function publishBurst(coalesce: boolean, count: number, bodyBytes: number): Promise<{ writes: number; turns: number }> {
  const exchange = uniqueName('ex_coalesce');
  const model = track(await amqp.connect(services.amqpUrl, { noDelay: true }));
  const channel = await model.createConfirmChannel();
  await channel.assertExchange(exchange, 'topic', { durable: false, autoDelete: false });
  try {
    const socket = socketOf(model);
    if (socket === undefined) throw new Error('the installed amqplib keeps no socket at connection.stream: writeCoalescer gathers nothing');
    const before = coalesce ? writeCoalescer(model) : () => undefined;
    const writes = countWrites(socket);
    const body = Buffer.alloc(bodyBytes, 'x');
    const written = socket.bytesWritten;
    const turns = countTurns();
    let handedOver = 0;
    const untilHandedOver = (async () => {
      while (socket.bytesWritten - written < count * bodyBytes || socket.writableLength > 0) await new Promise((resolve) => setImmediate(resolve));
      handedOver = turns.stop();
    })();
    const confirms = Array.from({ length: count }, (_, i) => {
      before();
      return new Promise<void>((resolve, reject) =>
        channel.publish(exchange, `t.${i}`, body, {}, (error: unknown) =>
          error === null || error === undefined ? resolve() : reject(new Error(String(error))),
        ),
      );
    });
    await Promise.all([...confirms, untilHandedOver]);
    return { writes: writes(), turns: handedOver };
  } finally {
    await channel.deleteExchange(exchange);
  }
}

describe('rabbitmq publisher: socket writes', () => {
  it('amqplib alone writes each publish apart; with the coalescer a burst leaves in a few writes, each confirmed', async () => {
    expect((await publishBurst(false, MESSAGES, 200)).writes).toBeGreaterThanOrEqual(MESSAGES / 2);
    // ~100 KB: a corked socket takes its high-water mark (16 KiB on Node 20) before it asks for 'drain'
    expect((await publishBurst(true, MESSAGES, 200)).writes).toBeLessThanOrEqual(20);
  });

  it('a burst of messages larger than a corked socket takes is handed to the kernel about as soon as amqplib alone hands it', async () => {
    const large = 40;
    const alone = await publishBurst(false, large, 65_536);
    const gathered = await publishBurst(true, large, 65_536);
    // holding the socket corked for two more turns after each 'drain' took at least two turns per message
    expect(gathered.turns).toBeLessThanOrEqual(alone.turns + large / 2);
  });

  it('a burst of messages larger than the socket takes corked arrives whole and in publish order', async () => {
    const fx = await exchangeFixture();
    const publisher = publisherFor({ url: services.amqpUrl, exchange: fx.exchange });
    // 64 KiB each: every one fills the corked socket past its high-water mark, so the rest goes out from 'drain'
    const messages = Array.from({ length: 40 }, (_, i) => testMessage(fx.topic('large'), { key: 'k', body: JSON.stringify({ i, pad: 'x'.repeat(65_536) }) }));
    await Promise.all(messages.map((m) => publisher.publish(m)));
    const deliveries = await fx.waitForDeliveries(messages.length);
    expect(deliveries.map((d) => d.properties.messageId)).toEqual(messages.map((m) => m.id));
    expect(deliveries.every((d, i) => d.content.toString('utf8') === messages[i]?.body)).toBe(true);
  });

  it('a burst through the publisher arrives whole and in publish order', async () => {
    const fx = await exchangeFixture();
    const publisher = publisherFor({ url: services.amqpUrl, exchange: fx.exchange });
    const messages = Array.from({ length: MESSAGES }, (_, i) => testMessage(fx.topic('burst'), { key: 'k', body: JSON.stringify({ i }) }));
    await Promise.all(messages.map((m) => publisher.publish(m)));
    const deliveries = await fx.waitForDeliveries(MESSAGES);
    expect(deliveries.map((d) => d.properties.messageId)).toEqual(messages.map((m) => m.id));
  });
});
