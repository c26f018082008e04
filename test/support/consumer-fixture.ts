import { newMessageId } from '../../src/core/ids.js';
import type { OutboxMessage } from '../../src/core/message.js';
import { PostgresInboxStore } from '../../src/stores/postgres/inbox/postgres-inbox-store.js';
import type { ReceivedMessage } from '../../src/consumer/received-message.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { createPostgresFixture, type PostgresFixture } from './postgres-fixture.js';

/**
 * A fresh schema holding an outbox, a migrated inbox and a business table `applied` that handlers write,
 * one row per application of a message: counting rows per message id counts its effects.
 */
export interface ConsumerFixture extends PostgresFixture {
  readonly inboxStore: PostgresInboxStore;
  readonly applied: string;
  /** A handler that records the message in `applied` through the inbox transaction. */
  apply(message: ReceivedMessage, tx: SqlExecutor): Promise<void>;
  /** Rows in `applied`, for one message or all. */
  appliedCount(id?: string): Promise<number>;
  inboxRow(consumer: string, id: string): Promise<{ state: string; attempts: number; last_error: string | null } | undefined>;
}

export async function createConsumerFixture(): Promise<ConsumerFixture> {
  const base = await createPostgresFixture();
  const inboxStore = new PostgresInboxStore(fromPgPool(base.pool), { schema: base.schema });
  await inboxStore.migrate();
  const applied = `"${base.schema}".applied`;
  await base.pool.query(`CREATE TABLE ${applied} (seq bigserial PRIMARY KEY, message_id uuid NOT NULL, key text, n int, topic text, type text, headers jsonb)`);
  return {
    ...base,
    inboxStore,
    applied,
    async apply(message, tx) {
      const n = (message.payload as { n?: unknown } | null)?.n;
      await tx.query(`INSERT INTO ${applied} (message_id, key, n, topic, type, headers) VALUES ($1, $2, $3, $4, $5, $6)`, [
        message.id,
        message.key,
        typeof n === 'number' ? n : null,
        message.topic,
        message.type,
        JSON.stringify(message.headers),
      ]);
    },
    async appliedCount(id) {
      const result =
        id === undefined
          ? await base.pool.query(`SELECT count(*)::int AS n FROM ${applied}`)
          : await base.pool.query(`SELECT count(*)::int AS n FROM ${applied} WHERE message_id = $1`, [id]);
      return Number(result.rows[0].n);
    },
    async inboxRow(consumer, id) {
      const result = await base.pool.query(`SELECT state, attempts, last_error FROM "${base.schema}".outbox_inbox WHERE consumer = $1 AND message_id = $2`, [
        consumer,
        id,
      ]);
      return result.rows[0];
    },
  };
}

/** An outbox message as the relay hands it to a publisher. */
export function outboxMessage(topic: string, overrides: Partial<OutboxMessage> & { payload?: unknown } = {}): OutboxMessage {
  const { payload, ...rest } = overrides;
  return {
    id: newMessageId(),
    seq: '1',
    topic,
    type: 'order.created',
    key: 'order-1',
    body: JSON.stringify(payload ?? { n: 1 }),
    contentType: 'application/json',
    headers: {},
    createdAt: new Date(),
    attempts: 1,
    lastError: null,
    ...rest,
  };
}
