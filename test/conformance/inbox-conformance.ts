import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigurationError, MessageValidationError } from '../../src/core/errors.js';
import { newMessageId } from '../../src/core/ids.js';
import { Inbox } from '../../src/consumer/inbox.js';
import { InboxRetention } from '../../src/consumer/inbox-retention.js';
import { MessageRegistry } from '../../src/consumer/message-registry.js';
import type { RawDelivery, ReceivedMessage } from '../../src/consumer/received-message.js';
import type { InboxStore } from '../../src/core/ports/inbox-store.js';
import type { SqlExecutor } from '../../src/stores/postgres/database.js';

/** What the suite's own SQL (its scratch table, its reads of the inbox table) needs from a database. */
export interface InboxSqlDialect<Tx> {
  /** A table of the environment's schema or database, quoted (and qualified) as the store's migration script names it. */
  table(name: string): string;
  /** The placeholder of the n-th parameter (from 1). */
  param(n: number): string;
  readonly uuidType: string;
  /** `count(*)` read back as a number. */
  readonly count: string;
  /** A time `hours` ago on the database clock, as the inbox table stores its times. */
  hoursAgo(hours: number): string;
  /** The store option naming the schema or database, checked against unsafe identifiers; null when there is none. */
  readonly namespaceOption: 'schema' | 'database' | null;
  /** Writes as a handler would, through its transaction. */
  write(tx: Tx, sql: string, params: readonly unknown[]): Promise<void>;
}

/** One database under the inbox conformance suite: a migrated inbox in a schema of its own. */
export interface InboxEnvironment<Tx = SqlExecutor> {
  readonly store: InboxStore<Tx>;
  readonly schema: string;
  /** A store over the same database with other options (its table is not migrated). */
  storeWith(options: { schema?: string; database?: string; table?: string }): InboxStore<Tx>;
  /** Plain SQL outside any transaction, with the dialect's placeholders. */
  sql(text: string, params?: unknown[]): Promise<readonly Record<string, unknown>[]>;
  /** Default: PostgreSQL's, in `schema`. */
  readonly dialect?: InboxSqlDialect<Tx>;
  cleanup(): Promise<void>;
}

export interface InboxHarness<Tx = SqlExecutor> {
  readonly name: string;
  /** Its store claims a batch in one statement (`claimMany`), so the inbox handles batches on it. */
  readonly batches?: boolean;
  setup(): Promise<InboxEnvironment<Tx>>;
}

export function postgresInboxDialect(schema: string): InboxSqlDialect<SqlExecutor> {
  return {
    table: (name) => `"${schema}"."${name}"`,
    param: (n) => `$${n}`,
    uuidType: 'uuid',
    count: 'count(*)::int',
    hoursAgo: (hours) => `now() - interval '${hours} hours'`,
    namespaceOption: 'schema',
    async write(tx, sql, params) {
      await tx.query(sql, [...params]);
    },
  };
}

const noDelay = { baseDelayMs: 10, maxDelayMs: 20, jitter: 0 };

export function message(overrides: Partial<ReceivedMessage> = {}): ReceivedMessage {
  return {
    id: newMessageId(),
    topic: 'orders.created',
    type: 'order.created',
    key: 'order-1',
    headers: {},
    payload: { n: 1 },
    contentType: 'application/json',
    deliveryCount: 1,
    ...overrides,
  };
}

/** A migrated inbox with a business table `applied` that handlers write: counting its rows per message counts effects. */
export async function openInboxScene<Tx>(harness: InboxHarness<Tx>) {
  const env = await harness.setup();
  const dialect = env.dialect ?? (postgresInboxDialect(env.schema) as unknown as InboxSqlDialect<Tx>);
  const { param: p } = dialect;
  const applied = dialect.table('applied');
  await env.sql(`CREATE TABLE ${applied} (message_id ${dialect.uuidType} NOT NULL, consumer text NOT NULL, n int)`);
  const apply = (consumer: string) => async (m: ReceivedMessage, tx: Tx) => {
    await dialect.write(tx, `INSERT INTO ${applied} (message_id, consumer, n) VALUES (${p(1)}, ${p(2)}, ${p(3)})`, [
      m.id,
      consumer,
      (m.payload as { n: number }).n,
    ]);
  };
  const count = async (id?: string) =>
    Number(
      (await env.sql(`SELECT ${dialect.count} AS n FROM ${applied}${id === undefined ? '' : ` WHERE message_id = ${p(1)}`}`, id === undefined ? [] : [id]))[0]
        ?.n,
    );
  const entry = async (consumer: string, id: string) =>
    (
      await env.sql(`SELECT state, attempts, last_error FROM ${dialect.table('outbox_inbox')} WHERE consumer = ${p(1)} AND message_id = ${p(2)}`, [
        consumer,
        id,
      ])
    )[0];
  return { env, dialect, p, applied, apply, count, entry };
}

export type InboxScene<Tx> = Awaited<ReturnType<typeof openInboxScene<Tx>>>;

/** Inside a `describe`: a function that opens a scene per test, each cleaned up after its test. */
export function inboxScenes<Tx>(harness: InboxHarness<Tx>): () => Promise<InboxScene<Tx>> {
  let env: InboxEnvironment<Tx> | undefined;
  afterEach(async () => {
    await env?.cleanup();
    env = undefined;
  });
  return async () => {
    const scene = await openInboxScene(harness);
    env = scene.env;
    return scene;
  };
}

export function describeInboxConformance<Tx = SqlExecutor>(harness: InboxHarness<Tx>): void {
  describe(`inbox conformance: ${harness.name}`, () => {
    const setup = inboxScenes(harness);

    it('migrates idempotently into outbox_inbox and refuses unsafe identifiers', async () => {
      const { env, dialect } = await setup();
      await env.store.migrate();
      const versions = await env.sql(`SELECT version FROM ${dialect.table('outboxer_migrations')} WHERE table_name = 'outbox_inbox'`);
      expect(versions.map((row) => row.version)).toEqual([1]);
      expect(env.store.migrationSql()).toContain(dialect.table('outbox_inbox'));
      const namespace = dialect.namespaceOption;
      for (const bad of ['x"; DROP TABLE t; --', '"quoted"', 'a.b', 'with space', '']) {
        expect(() => env.storeWith({ table: bad })).toThrow(ConfigurationError);
        if (namespace !== null) expect(() => env.storeWith({ [namespace]: bad })).toThrow(ConfigurationError);
      }
    });

    it('applies a redelivered message once: the copy is skipped as a duplicate', async () => {
      const { env, apply, count } = await setup();
      const inbox = new Inbox(env.store, { consumer: 'billing' });
      const m = message();
      expect(await inbox.handle(m, apply('billing'))).toEqual({ status: 'processed', attempts: 1 });
      expect(await inbox.handle(m, apply('billing'))).toEqual({ status: 'duplicate', state: 'processed' });
      expect(await inbox.handle({ ...m, deliveryCount: 2 }, apply('billing'))).toEqual({ status: 'duplicate', state: 'processed' });
      expect(await count(m.id)).toBe(1);
      expect(await env.store.stats('billing')).toEqual({ processed: 1, failed: 0, dead: 0 });
    });

    it('applies concurrent copies of one message once', async () => {
      const { env, apply, count } = await setup();
      const inbox = new Inbox(env.store, { consumer: 'billing' });
      const m = message();
      const outcomes = await Promise.all(Array.from({ length: 6 }, () => inbox.handle(m, apply('billing'))));
      expect(outcomes.filter((o) => o.status === 'processed')).toHaveLength(1);
      expect(outcomes.filter((o) => o.status === 'duplicate')).toHaveLength(5);
      expect(await count(m.id)).toBe(1);
    });

    it('rolls back every write of a failing handler, records the attempt outside it, and retries', async () => {
      const { env, dialect, p, applied, count, entry } = await setup();
      const inbox = new Inbox(env.store, { consumer: 'billing', retry: { ...noDelay, baseDelayMs: 100, maxDelayMs: 1000 } });
      const m = message();
      let calls = 0;
      const flaky = async (msg: ReceivedMessage, tx: Tx) => {
        calls++;
        await dialect.write(tx, `INSERT INTO ${applied} (message_id, consumer, n) VALUES (${p(1)}, 'billing', ${p(2)})`, [msg.id, calls]);
        if (calls < 3) throw new Error(`downstream refused (call ${calls})`);
      };
      expect(await inbox.handle(m, flaky)).toMatchObject({ status: 'retry', attempts: 1, retryInMs: 100 });
      expect(await count(m.id)).toBe(0);
      expect(await entry('billing', m.id)).toMatchObject({ state: 'failed', attempts: 1, last_error: 'Error: downstream refused (call 1)' });
      expect(await inbox.handle(m, flaky)).toMatchObject({ status: 'retry', attempts: 2, retryInMs: 200 });
      expect(await inbox.handle(m, flaky)).toEqual({ status: 'processed', attempts: 3 });
      expect(await count(m.id)).toBe(1);
      expect(await env.sql(`SELECT n FROM ${applied}`)).toEqual([{ n: 3 }]);
      expect(await entry('billing', m.id)).toMatchObject({ state: 'processed', attempts: 3 });
    });

    it('parks a message as dead with its reason after maxAttempts; copies are then skipped until an operator purges it', async () => {
      const { env, apply, count } = await setup();
      const dead: string[] = [];
      const inbox = new Inbox(env.store, { consumer: 'billing', retry: { ...noDelay, maxAttempts: 3 }, hooks: { onDead: (e) => dead.push(e.id) } });
      const m = message();
      const failing = async () => {
        throw new Error('always fails');
      };
      expect((await inbox.handle(m, failing)).status).toBe('retry');
      expect((await inbox.handle(m, failing)).status).toBe('retry');
      expect(await inbox.handle(m, failing)).toEqual({ status: 'dead', attempts: 3, reason: 'Error: always fails' });
      expect(dead).toEqual([m.id]);
      expect(await inbox.handle(m, apply('billing'))).toEqual({ status: 'duplicate', state: 'dead' });
      expect(await count()).toBe(0);
      const listed = await env.store.listDead('billing', 10);
      expect(listed).toMatchObject([{ id: m.id, type: 'order.created', topic: 'orders.created', key: 'order-1', attempts: 3, reason: 'Error: always fails' }]);
      expect(await env.store.listDead('other', 10)).toEqual([]);
      expect(await env.store.purgeDead('billing', 'all')).toBe(1);
      expect(await inbox.handle(m, apply('billing'))).toMatchObject({ status: 'processed' });
      expect(await count(m.id)).toBe(1);
    });

    it('lets two consumers with different names each process the same message once', async () => {
      const { env, dialect, apply, applied } = await setup();
      const billing = new Inbox(env.store, { consumer: 'billing' });
      const shipping = new Inbox(env.store, { consumer: 'shipping' });
      const m = message();
      for (let copy = 0; copy < 3; copy++) {
        await billing.handle(m, apply('billing'));
        await shipping.handle(m, apply('shipping'));
      }
      const rows = await env.sql(`SELECT consumer, ${dialect.count} AS n FROM ${applied} GROUP BY consumer ORDER BY consumer`);
      expect(rows).toEqual([
        { consumer: 'billing', n: 1 },
        { consumer: 'shipping', n: 1 },
      ]);
    });

    it('sends an unknown type, an invalid payload and a body that is not JSON straight to dead, running nothing', async () => {
      const { env, count, entry } = await setup();
      let ran = 0;
      const registry = new MessageRegistry<Tx>().register('order.created', z.object({ n: z.number() }), async () => {
        ran++;
      });
      const inbox = new Inbox(env.store, { consumer: 'typed', registry, retry: { ...noDelay, maxAttempts: 5 } });
      const unknown = message({ type: 'order.exploded' });
      const outcome = await inbox.handle(unknown);
      expect(outcome).toMatchObject({ status: 'dead', attempts: 1 });
      expect(outcome.status === 'dead' && outcome.reason).toMatch(/^OUTBOXER_UNKNOWN_TYPE: /);
      const invalid = message({ payload: { n: 'not a number' } });
      const invalidOutcome = await inbox.handle(invalid);
      expect(invalidOutcome.status === 'dead' && invalidOutcome.reason).toMatch(
        new RegExp(`^OUTBOXER_SCHEMA_MISMATCH: message ${invalid.id}: .*\\(n: .*fix the payload`),
      );
      const raw: RawDelivery = {
        id: newMessageId(),
        type: 'order.created',
        key: undefined,
        topic: 't',
        headers: {},
        body: Buffer.from('{"n": 1'),
        contentType: 'application/json',
        deliveryCount: 1,
      };
      expect(await inbox.handleDelivery(raw)).toMatchObject({ status: 'dead', reason: expect.stringMatching(/OUTBOXER_PAYLOAD_NOT_JSON/) });
      expect(await entry('typed', raw.id!)).toMatchObject({ state: 'dead', attempts: 1 });
      const valid = message({ payload: { n: 2 } });
      expect(await inbox.handle(valid)).toMatchObject({ status: 'processed' });
      expect(ran).toBe(1);
      expect(await count()).toBe(0);
    });

    it('treats a MessageValidationError thrown by a handler as permanent, and a delivery without an id as malformed', async () => {
      const { env } = await setup();
      const inbox = new Inbox(env.store, { consumer: 'c', retry: { ...noDelay, maxAttempts: 5 } });
      const refused = await inbox.handle(message(), async () => {
        throw new MessageValidationError('OUTBOXER_PAYLOAD_NOT_JSON', 'amount is negative');
      });
      expect(refused).toMatchObject({ status: 'dead', attempts: 1 });
      const malformed = await inbox.handleDelivery(
        { id: 'not-a-uuid', type: 'x', key: undefined, topic: 't', headers: {}, body: Buffer.from('{}'), contentType: undefined, deliveryCount: 1 },
        async () => undefined,
      );
      expect(malformed).toMatchObject({ status: 'malformed', reason: expect.stringMatching(/^OUTBOXER_MALFORMED_MESSAGE/) });
      expect(await env.store.stats()).toEqual({ processed: 0, failed: 0, dead: 1 });
      await expect(inbox.handle(message())).rejects.toThrow(ConfigurationError);
    });

    it('expires processed entries after the retention window, in bounded batches, and keeps failed and dead ones', async () => {
      const { env, dialect, apply } = await setup();
      const inbox = new Inbox(env.store, { consumer: 'c', retry: { ...noDelay, maxAttempts: 1 } });
      const old = Array.from({ length: 10 }, () => message());
      for (const m of old) await inbox.handle(m, apply('c'));
      await inbox.handle(message(), async () => {
        throw new Error('dead one');
      });
      await env.sql(`UPDATE ${dialect.table('outbox_inbox')} SET processed_at = ${dialect.hoursAgo(2)}, dead_at = ${dialect.hoursAgo(2)}`);
      const fresh = message();
      await inbox.handle(fresh, apply('c'));
      const retention = new InboxRetention(env.store, { retainProcessedMs: 3_600_000, batchSize: 3, maxBatchesPerRun: 2 });
      expect(await retention.runOnce()).toBe(6);
      expect(await retention.runOnce()).toBe(4);
      expect(await retention.runOnce()).toBe(0);
      expect(await env.store.stats()).toEqual({ processed: 1, failed: 0, dead: 1 });
      expect(await inbox.handle(fresh, apply('c'))).toEqual({ status: 'duplicate', state: 'processed' });
      expect(() => new InboxRetention(env.store, { batchSize: 0 })).toThrow(ConfigurationError);
    });
  });
}
