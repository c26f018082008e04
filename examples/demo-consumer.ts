import { Inbox } from '../src/consumer/inbox.js';
import type { MessageHandler } from '../src/consumer/message-registry.js';
import type { OutboxMessage } from '../src/index.js';
import type { DemoDatabase } from './demo-database.js';

type Say = (who: string, text: string) => void;

/** The consumer side of the demo: a shipping service that applies each order event once, through an inbox. */
export interface Shipping<Tx = unknown> {
  readonly inbox: Inbox<Tx>;
  /** Ships the order of one event, in the inbox's transaction. */
  readonly handler: MessageHandler<Tx>;
  /** Orders shipped so far (rows in the shipments table). */
  shipped(): Promise<number>;
  /** Copies the inbox recognised and skipped so far. */
  readonly duplicatesSkipped: () => number;
}

export function createShipping<Tx>(database: DemoDatabase<unknown, Tx>, say: Say, from: string): Shipping<Tx> {
  let duplicates = 0;
  const inbox = new Inbox<Tx>(database.inboxStore, {
    consumer: 'shipping',
    hooks: {
      onDuplicate: (event) => {
        duplicates++;
        say('shipping', `skipped a duplicate delivery of ${event.id}: the inbox has it as ${event.state}`);
      },
    },
  });
  const handler: MessageHandler<Tx> = async (message, tx) => {
    const { orderNo } = message.payload as { orderNo: number };
    await database.insertShipment(tx, orderNo, message.id);
    say('shipping', `received ${message.topic} ${message.id} from ${from}${message.deliveryCount > 1 ? ' (redelivered)' : ''}: order ${orderNo} shipped`);
  };
  return {
    inbox,
    handler,
    duplicatesSkipped: () => duplicates,
    shipped: () => database.shipped(),
  };
}

/**
 * The in-memory hand-over behind the in-memory destination: it hands each stored message to the shipping
 * inbox, and the first one twice (as a broker redelivers), so the inbox has a copy to skip.
 */
export function createMemoryHandover<Tx>(shipping: Shipping<Tx>) {
  const pending = new Set<Promise<void>>();
  let redelivered = false;
  const handle = (message: OutboxMessage, deliveryCount: number) =>
    shipping.inbox.handle(
      { id: message.id, topic: message.topic, type: message.type, key: message.key, headers: message.headers, payload: JSON.parse(message.body as string), contentType: message.contentType, deliveryCount },
      shipping.handler,
    );
  return {
    deliver(message: OutboxMessage) {
      const run = handle(message, 1).then(async () => {
        if (redelivered) return;
        redelivered = true;
        await handle(message, 2);
      });
      pending.add(run);
      void run.finally(() => pending.delete(run));
    },
    async settled(): Promise<void> {
      await Promise.all([...pending]);
    },
  };
}
