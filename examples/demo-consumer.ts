import { Inbox } from '../src/consumer/inbox.js';
import type { OutboxMessage } from '../src/index.js';
import type { DemoDatabase } from './demo-database.js';

/**
 * The consumer side of the demo: a shipping service that applies each order event once through the
 * inbox, even when the broker delivers a copy (the destination redelivers the first event on purpose).
 */
export function createDemoConsumer(database: DemoDatabase, say: (who: string, text: string) => void) {
  const inbox = new Inbox(database.inboxStore, { consumer: 'shipping' });
  const pending = new Set<Promise<void>>();
  let redelivered = false;
  const handle = async (message: OutboxMessage, copy: boolean) => {
    const payload = JSON.parse(message.body as string) as { orderNo: number };
    const outcome = await inbox.handle(
      { id: message.id, topic: message.topic, type: message.type, key: message.key, headers: message.headers, payload, contentType: message.contentType, deliveryCount: copy ? 2 : 1 },
      async (received, tx) => {
        await tx.query(`INSERT INTO ${database.shipmentsTable} (order_no, event_id) VALUES ($1, $2)`, [payload.orderNo, received.id]);
      },
    );
    const what = outcome.status === 'duplicate' ? 'skipped a duplicate delivery of' : `${outcome.status}`;
    say('shipping', `${copy ? '(broker redelivery) ' : ''}${what} ${message.id} -> order ${payload.orderNo}`);
  };
  return {
    deliver(message: OutboxMessage) {
      const run = handle(message, false).then(async () => {
        if (redelivered) return;
        redelivered = true;
        await handle(message, true);
      });
      pending.add(run);
      void run.finally(() => pending.delete(run));
    },
    async settled(): Promise<number> {
      await Promise.all([...pending]);
      const rows = await database.transaction((tx) => tx.query(`SELECT count(*)::int AS n FROM ${database.shipmentsTable}`, []));
      return (rows.rows[0] as { n: number }).n;
    },
  };
}
