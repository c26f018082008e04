import amqp from 'amqplib';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { rawDeliveryOf as natsDeliveryOf } from '../../src/brokers/nats/consumer/wire.js';
import { rawDeliveryOf as amqpDeliveryOf } from '../../src/brokers/rabbitmq/consumer/wire.js';
import { rebuildMessage, type ReceivedMessage } from '../../src/consumer/received-message.js';
import type { BrokerRig } from './broker-rigs.js';
import { services } from './services.js';

/** One delivery as a consumer sees it, and its wire form with the message's own id taken out. */
export interface WireDelivery {
  readonly message: ReceivedMessage;
  /** Subject or routing key, body bytes (hex), content type, and every header or property but the id. */
  readonly wire: Record<string, unknown>;
}

/**
 * A second consumer on the rig's broker, for one topic: RabbitMQ through a queue of its own bound to the
 * rig's exchange, NATS through an ordered consumer of the rig's stream filtered on the subject.
 */
export interface WireProbe {
  readonly deliveries: WireDelivery[];
  close(): Promise<void>;
}

export async function wireProbe(rig: BrokerRig, topic: string): Promise<WireProbe> {
  const args = rig.cliArgs();
  const deliveries: WireDelivery[] = [];
  if (args[args.indexOf('--publisher') + 1] === 'rabbitmq') {
    const exchange = args[args.indexOf('--exchange') + 1] ?? '';
    const connection = await amqp.connect(services.amqpUrl);
    const channel = await connection.createChannel();
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
    await channel.bindQueue(queue, exchange, topic);
    await channel.consume(
      queue,
      (delivery) => {
        if (delivery === null) return;
        const { messageId, headers, timestamp, ...properties } = delivery.properties;
        const { 'x-outbox-id': _id, ...otherHeaders }: Record<string, unknown> = headers ?? {};
        const wire = {
          routingKey: delivery.fields.routingKey,
          body: delivery.content.toString('hex'),
          ...properties,
          headers: otherHeaders,
          timestamped: typeof timestamp === 'number',
          idAsProperty: typeof messageId === 'string',
        };
        deliveries.push({ message: rebuildMessage(amqpDeliveryOf(delivery)), wire });
      },
      { noAck: true },
    );
    return { deliveries, close: () => connection.close() };
  }
  const nc = await natsConnect({ servers: services.natsUrl });
  const stream = await (await jetstreamManager(nc)).streams.find(topic);
  const consumer = await jetstream(nc).consumers.get(stream, { filter_subjects: topic });
  const messages = await consumer.consume();
  void (async () => {
    for await (const m of messages) {
      const headers: Record<string, string> = {};
      for (const [name, values] of m.headers ?? []) if (name !== 'Nats-Msg-Id' && name !== 'Outbox-Id') headers[name] = values.join(',');
      deliveries.push({
        message: rebuildMessage(natsDeliveryOf(m, undefined)),
        wire: { subject: m.subject, body: Buffer.from(m.data).toString('hex'), headers },
      });
    }
  })();
  return {
    deliveries,
    async close() {
      await messages.close();
      await nc.close();
    },
  };
}
