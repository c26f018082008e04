import { jetstream } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import amqp from 'amqplib';
import type { OutboxMessage } from '../../src/core/message.js';
import { bodyOf, headersOf, subjectFor } from '../../src/brokers/nats/wire.js';
import { toAmqpPublication } from '../../src/brokers/rabbitmq/wire.js';

/** The ideal relay's side of the broker: its own client, with the relay's wire form (see ideal-relay.ts). */
export interface IdealBroker {
  readonly publish: (message: OutboxMessage) => Promise<void>;
  /** Messages the broker confirmed but could not route (RabbitMQ `mandatory` returns): failures too. */
  readonly unroutable: () => number;
  close(): Promise<void>;
}

/** amqplib confirm channel, `mandatory` (the relay's publication properties). */
export async function rabbitMqBroker(url: string, exchange: string): Promise<IdealBroker> {
  const connection = await amqp.connect(url);
  const channel = await connection.createConfirmChannel();
  let returned = 0;
  channel.on('return', () => returned++);
  return {
    unroutable: () => returned,
    publish: (message) => {
      const publication = toAmqpPublication(message);
      return new Promise<void>((resolve, reject) => {
        channel.publish(exchange, publication.routingKey, publication.body, publication.properties, (error: unknown) =>
          error === null || error === undefined ? resolve() : reject(error instanceof Error ? error : new Error(String(error))),
        );
      });
    },
    async close() {
      await channel.close().catch(() => undefined);
      await connection.close().catch(() => undefined);
    },
  };
}

/** @nats-io/jetstream publish awaiting the PubAck, the message id as `Nats-Msg-Id`. */
export async function natsBroker(url: string): Promise<IdealBroker> {
  const nc = await natsConnect({ servers: url, noAsyncTraces: true });
  const js = jetstream(nc);
  return {
    unroutable: () => 0,
    publish: async (message) => {
      await js.publish(subjectFor(message, undefined), bodyOf(message), { msgID: message.id, headers: headersOf(message), timeout: 10_000 });
    },
    close: () => nc.close(),
  };
}

/** At most `size` holders; waiters are served in arrival order, so an older batch's rows go before a newer one's. */
export class Window {
  #free: number;
  readonly #waiters: (() => void)[] = [];
  constructor(size: number) {
    this.#free = size;
  }
  acquire(): Promise<void> | undefined {
    if (this.#free > 0 && this.#waiters.length === 0) {
      this.#free--;
      return undefined;
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
  release(): void {
    const next = this.#waiters.shift();
    if (next === undefined) this.#free++;
    else next();
  }
}
