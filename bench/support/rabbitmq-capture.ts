import amqp from 'amqplib';
import { OutboxAmqpHeaders } from '../../src/brokers/rabbitmq/index.js';
import { services } from '../config.js';
import type { Delivery } from '../measure/first-deliveries.js';

/** A queue of our own bound to a bench exchange and topic, read back in its order once the relays are done. */
export interface RabbitMqCapture {
  /** Messages the queue holds now. */
  count(): Promise<number>;
  /** Takes every message the queue holds, in queue order (`{"n": ...}` bodies, the key from its header). */
  takeAll(): Promise<Delivery[]>;
  close(): Promise<void>;
}

/** Binds an exclusive queue (gone with the connection) to `exchange` for `topic`. */
export async function captureRabbitMq(exchange: string, topic: string): Promise<RabbitMqCapture> {
  const connection = await amqp.connect(services.amqpUrl);
  const channel = await connection.createChannel();
  const { queue } = await channel.assertQueue('', { exclusive: true });
  await channel.bindQueue(queue, exchange, topic);
  return {
    async count() {
      return (await channel.checkQueue(queue)).messageCount;
    },
    async takeAll() {
      const deliveries: Delivery[] = [];
      for (let message = await channel.get(queue, { noAck: true }); message !== false; message = await channel.get(queue, { noAck: true })) {
        const body = JSON.parse(message.content.toString()) as { n?: unknown };
        const key: unknown = (message.properties.headers as Record<string, unknown> | undefined)?.[OutboxAmqpHeaders.key];
        if (typeof body.n !== 'number' || typeof key !== 'string')
          throw new Error(`a captured message has no number or key: ${message.content.toString().slice(0, 80)}`);
        deliveries.push({ key, n: body.n });
      }
      return deliveries;
    },
    async close() {
      await connection.close();
    },
  };
}
