import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import peer from 'pg-transactional-outbox';
import { JSON_CONTENT_TYPE, type OutboxMessage, type Publisher } from '../../src/index.js';
import { services } from '../config.js';
import { benchPool, bulkLoad, uniqueName } from '../support/database.js';
import { keyOf, MESSAGE_TYPE, payloadOf, payloadSql } from '../support/workload.js';
import type { ContenderOptions, RelayContender } from './contender.js';

export const PEER_POLL_MS = 250;

/**
 * pg-transactional-outbox 0.5.x in its polling mode (the server runs wal_level=replica, so its logical
 * replication listener cannot run here). Keyed messages are `sequential` in a segment named after the key,
 * its per-key order. Each message is published inside its own transaction holding the row lock, so its
 * concurrency is bounded by its handler pool: batch size = handler connections.
 */
export function pgTransactionalOutboxContender({ workload, relayConnections }: ContenderOptions): RelayContender {
  const schema = uniqueName('bench_peer');
  const appName = `bench-peer-${schema.slice(-5)}`;
  const table = 'outbox';
  const handlerConnections = Math.max(1, relayConnections - 2);
  const listenerDb: pg.PoolConfig = { connectionString: services.postgresUrl, application_name: appName, max: 2 };
  const handlerDb: pg.PoolConfig = { connectionString: services.postgresUrl, application_name: appName, max: handlerConnections };
  const config: peer.PollingListenerConfig = {
    outboxOrInbox: 'outbox',
    dbListenerConfig: listenerDb,
    dbHandlerConfig: handlerDb,
    settings: {
      dbSchema: schema,
      dbTable: table,
      enableMaxAttemptsProtection: false,
      enablePoisonousMessageProtection: false,
      messageCleanupIntervalInMs: 0,
      nextMessagesFunctionName: 'next_outbox_messages',
      nextMessagesFunctionSchema: schema,
      nextMessagesBatchSize: handlerConnections,
      nextMessagesPollingIntervalInMs: PEER_POLL_MS,
    },
  };
  const logger = peer.getDisabledLogger();
  const storeMessage = peer.initializeMessageStorage(config, logger);
  const claimPool = benchPool(appName, 1);
  let shutdown: (() => Promise<void>) | undefined;
  const setupConfig = { outboxOrInbox: 'outbox' as const, database: 'test', schema, table, listenerRole: 'postgres', nextMessagesName: 'next_outbox_messages' };

  return {
    name: 'pg-transactional-outbox (polling)',
    appName,
    async setup(admin) {
      // Its index script drops indexes by unqualified name (it could hit another schema's): skip the DROPs, the schema is new.
      const indexes = peer.DatabaseSetup.setupPollingIndexes(setupConfig)
        .split('\n')
        .filter((line) => !line.startsWith('DROP INDEX'))
        .join('\n');
      await admin.query(peer.DatabaseSetup.dropAndCreateTable(setupConfig));
      await admin.query(peer.DatabaseSetup.createPollingFunction(setupConfig));
      await admin.query(indexes);
    },
    async load(admin, first, count) {
      await bulkLoad(
        admin,
        count,
        (from, to) => `INSERT INTO "${schema}".${table} (id, aggregate_type, aggregate_id, message_type, segment, concurrency, payload)
        SELECT gen_random_uuid(), '${workload.topic}', 'k-' || (g % ${workload.keys}), '${MESSAGE_TYPE}', 'k-' || (g % ${workload.keys}), 'sequential', ${payloadSql('g', workload)}
        FROM generate_series(${first + from}, ${first + to}) g`,
      );
      await admin.query(`ANALYZE "${schema}".${table}`);
    },
    async enqueue(client: pg.PoolClient, n: number) {
      const id = randomUUID();
      const key = keyOf(n, workload);
      await storeMessage(
        {
          id,
          aggregateType: workload.topic,
          aggregateId: key,
          messageType: MESSAGE_TYPE,
          segment: key,
          concurrency: 'sequential',
          payload: payloadOf(n, workload),
        },
        client,
      );
      return id;
    },
    committed() {},
    async start(publisher: Publisher) {
      const handler = {
        handle: async (message: peer.StoredTransactionalMessage): Promise<void> => {
          const outgoing: OutboxMessage = {
            id: message.id,
            seq: '0',
            topic: message.aggregateType,
            type: message.messageType,
            key: message.segment ?? null,
            body: JSON.stringify(message.payload),
            contentType: JSON_CONTENT_TYPE,
            headers: {},
            createdAt: new Date(message.createdAt),
            attempts: message.startedAttempts,
            lastError: null,
          };
          await publisher.publish(outgoing);
        },
      };
      [shutdown] = peer.initializePollingMessageListener(config, handler, logger);
    },
    async stop() {
      await shutdown?.();
      shutdown = undefined;
    },
    async pending(admin) {
      const result = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".${table} WHERE processed_at IS NULL AND abandoned_at IS NULL`);
      return (result.rows[0] as { n: number }).n;
    },
    async claimOnce(limit) {
      const client = await claimPool.connect();
      try {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
        const started = performance.now();
        const result = await client.query(`SELECT * FROM "${schema}".next_outbox_messages(${limit}, 5000)`);
        const ms = performance.now() - started;
        return { claimed: result.rows.length, ms };
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    },
    async teardown(admin) {
      await this.stop();
      await claimPool.end();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
}
