import amqp from 'amqplib';
import { toAmqpPublication } from '../../src/brokers/rabbitmq/wire.js';
import { services } from '../config.js';
import type { BrokerTarget } from '../support/broker-target.js';
import { ceilingMessage, type Workload } from '../support/workload.js';
import { type CeilingRun, windowed } from './ceiling-window.js';

/**
 * RabbitMQ's own ceiling: amqplib on one confirm channel, the relay's wire form (same routing key, properties,
 * headers and body bytes, mandatory), at most `window` publishes awaiting their confirm, and no database.
 */
export async function rabbitMqCeiling(target: BrokerTarget, workload: Workload, count: number, window: number): Promise<CeilingRun> {
  const connection = await amqp.connect(services.amqpUrl);
  const channel = await connection.createConfirmChannel();
  let returned = 0;
  channel.on('return', () => returned++);
  try {
    const run = await windowed(count, window, (n) => {
      const publication = toAmqpPublication(ceilingMessage(n, workload));
      return new Promise<void>((resolve, reject) => {
        // The window bounds what is buffered, so the return value (socket buffer full) needs no wait here.
        channel.publish(target.resource, publication.routingKey, publication.body, publication.properties, (error: unknown) =>
          error === null || error === undefined ? resolve() : reject(error instanceof Error ? error : new Error(String(error))),
        );
      });
    });
    if (returned > 0) throw new Error(`rabbitmq ceiling: ${returned} messages came back unroutable`);
    return run;
  } finally {
    await channel.close().catch(() => undefined);
    await connection.close().catch(() => undefined);
  }
}
