import { describe, expect, it, vi } from 'vitest';
import { ConfigurationError, MessageValidationError } from '../../src/core/errors.js';
import type { NewOutboxMessage, OutboxMessageInput } from '../../src/core/message.js';
import { DEFAULT_MAX_PAYLOAD_BYTES, Outbox } from '../../src/core/outbox.js';
import type { Membership, OutboxStore, PartitionReader, Publisher, RelayLeases } from '../../src/core/ports.js';

interface FakeTx {
  readonly name: string;
}

/** A membership that grants nothing: a relay over it joins, beats and leaves, and never reads. */
const grantless = (relayId: string): Membership => ({
  relayId,
  alive: true,
  relays: [],
  owned: [],
  grantable: 0,
  config: { partitionCount: 4, generation: 1, resizeTo: null, grantsOpen: true },
});

/** An in-memory OutboxStore (our own port) with partition leases that grant nothing: records inserts and joins. */
function fakeStore() {
  const inserts: { tx: unknown; messages: readonly NewOutboxMessage[] }[] = [];
  let joins = 0;
  let insertError: Error | undefined;
  const leases: RelayLeases = {
    join: async () => grantless(`r${++joins}`),
    heartbeat: async (relayId) => grantless(relayId),
    membership: async (relayId) => grantless(relayId),
    acquire: async () => [],
    drain: async () => 0,
    release: async () => 0,
    leave: async () => 0,
  };
  const reader: PartitionReader = {
    read: async () => {
      throw new Error('the fake grants no partition: nothing to read');
    },
    complete: async () => [],
    countAttempt: async () => false,
  };
  const store: OutboxStore<FakeTx> & { readonly leases: RelayLeases; readonly reader: PartitionReader } = {
    leases,
    reader,
    async insert(tx, messages) {
      if (insertError !== undefined) throw insertError;
      inserts.push({ tx, messages });
      return messages.map((m) => m.id);
    },
    purgePublished: async () => 0,
    purgeIdempotencyKeys: async () => 0,
    stats: async () => ({ pending: 0, scheduled: 0, published: 0, dead: 0, oldestPendingAgeSeconds: 0 }),
    listDead: async () => [],
    retryDead: async () => 0,
    purgeDead: async () => 0,
    topicLag: async () => [],
    pauseTopic: async () => true,
    resumeTopic: async () => true,
    pausedTopics: async () => [],
    pauseDestination: async () => true,
    resumeDestination: async () => true,
    pausedDestinations: async () => [],
    relayGroup: async () => ({ partitionCount: 0, relays: [], unowned: [] }),
    migrate: async () => undefined,
    migrationSql: () => '',
    close: async () => undefined,
  };
  return {
    store,
    inserts,
    joins: () => joins,
    failInserts(error: Error) {
      insertError = error;
    },
  };
}

const publisher: Publisher = { name: 'fake', capabilities: {}, publish: async () => undefined, close: async () => undefined };
const tx: FakeTx = { name: 'caller-tx' };
const message = (n: number, extra: Partial<OutboxMessageInput> = {}): OutboxMessageInput => ({
  topic: 'orders',
  type: 'order.created',
  payload: { n },
  ...extra,
});

describe('Outbox construction', () => {
  it('defaults maxPayloadBytes to 256 KiB and freezes its limits', () => {
    const outbox = new Outbox(fakeStore().store);
    expect(DEFAULT_MAX_PAYLOAD_BYTES).toBe(262_144);
    expect(outbox.limits).toEqual({ maxPayloadBytes: 262_144 });
    expect(Object.isFrozen(outbox.limits)).toBe(true);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '1024'])('refuses maxPayloadBytes %j', (maxPayloadBytes) => {
    let caught: unknown;
    try {
      new Outbox(fakeStore().store, { maxPayloadBytes: maxPayloadBytes as number });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigurationError);
    expect((caught as ConfigurationError).code).toBe('OUTBOXER_INVALID_OPTION');
    expect((caught as ConfigurationError).message).toContain('maxPayloadBytes');
  });

  it('refuses the removed maxConcurrentHandoffs instead of ignoring it', () => {
    const options = { maxConcurrentHandoffs: 16 } as unknown as ConstructorParameters<typeof Outbox>[1];
    expect(() => new Outbox(fakeStore().store, options)).toThrow(/maxConcurrentHandoffs.*remove it/);
  });
});

describe('Outbox.enqueue', () => {
  it('validates before calling store.insert: an invalid message never reaches the store', async () => {
    const fake = fakeStore();
    const outbox = new Outbox(fake.store);
    await expect(outbox.enqueue(tx, message(1, { topic: 'orders.*' }))).rejects.toMatchObject({ code: 'OUTBOXER_INVALID_TOPIC' });
    await expect(outbox.enqueue(tx, message(1, { payload: undefined }))).rejects.toBeInstanceOf(MessageValidationError);
    expect(fake.inserts).toEqual([]);
  });

  it('enforces its own maxPayloadBytes: at the limit is stored, one byte over is refused', async () => {
    const fake = fakeStore();
    const outbox = new Outbox(fake.store, { maxPayloadBytes: 10 });
    await outbox.enqueue(tx, message(0, { payload: '12345678' })); // '"12345678"' is 10 bytes
    await expect(outbox.enqueue(tx, message(0, { payload: '123456789' }))).rejects.toMatchObject({ code: 'OUTBOXER_PAYLOAD_TOO_LARGE' });
    expect(fake.inserts).toHaveLength(1);
  });

  it('hands the caller transaction to the store untouched and returns the stored id', async () => {
    const fake = fakeStore();
    const touched: PropertyKey[] = [];
    const guardedTx = new Proxy(tx, {
      get(target, property, receiver) {
        touched.push(property);
        return Reflect.get(target, property, receiver);
      },
    });
    const id = await new Outbox(fake.store).enqueue(guardedTx, message(1, { key: 'c-1' }));
    expect(fake.inserts).toHaveLength(1);
    expect(fake.inserts[0]?.tx).toBe(guardedTx);
    expect(fake.inserts[0]?.messages.map((m) => m.id)).toEqual([id]);
    expect(fake.inserts[0]?.messages[0]).toMatchObject({ topic: 'orders', key: 'c-1', body: '{"n":1}' });
    expect(touched).toEqual([]); // no commit, no rollback, not even a look
  });

  it('propagates a store failure unchanged', async () => {
    const fake = fakeStore();
    const failure = new Error('deadlock detected');
    fake.failInserts(failure);
    await expect(new Outbox(fake.store).enqueue(tx, message(1))).rejects.toBe(failure);
  });
});

describe('Outbox.enqueueMany', () => {
  it('inserts in the given order, in one call, and returns the ids in that order', async () => {
    const fake = fakeStore();
    const inputs = Array.from({ length: 50 }, (_, i) => message(i, { key: i % 2 === 0 ? 'even' : 'odd' }));
    const ids = await new Outbox(fake.store).enqueueMany(tx, inputs);
    expect(fake.inserts).toHaveLength(1);
    const stored = fake.inserts[0]?.messages ?? [];
    expect(stored.map((m) => JSON.parse(m.body as string))).toEqual(inputs.map((m) => m.payload));
    expect(stored.map((m) => m.id)).toEqual(ids);
    expect(new Set(ids).size).toBe(50);
  });

  it('keeps custom ids and generated ids in place', async () => {
    const fake = fakeStore();
    const custom = '018f3c1e-7b2a-7cde-8f01-23456789abcd';
    const ids = await new Outbox(fake.store).enqueueMany(tx, [message(1), message(2, { id: custom }), message(3)]);
    expect(ids).toHaveLength(3);
    expect(ids[1]).toBe(custom);
    expect(ids[0]).not.toBe(custom);
  });

  it('stores nothing when any message of the batch is invalid', async () => {
    const fake = fakeStore();
    const batch = [message(1), message(2), message(3, { type: '' })];
    await expect(new Outbox(fake.store).enqueueMany(tx, batch)).rejects.toMatchObject({ code: 'OUTBOXER_TYPE_REQUIRED' });
    expect(fake.inserts).toEqual([]);
  });

  it('returns no ids for an empty batch', async () => {
    const fake = fakeStore();
    await expect(new Outbox(fake.store).enqueueMany(tx, [])).resolves.toEqual([]);
    expect(fake.inserts.flatMap((insert) => insert.messages)).toEqual([]);
  });
});

describe('Outbox relays', () => {
  it('createRelay resolves and validates the relay options', () => {
    const outbox = new Outbox(fakeStore().store);
    expect(outbox.createRelay(publisher, { batchSize: 7 }).options.batchSize).toBe(7);
    expect(() => outbox.createRelay(publisher, { batchSize: 0 })).toThrow(ConfigurationError);
    const { leases: _leases, reader: _reader, ...claimless } = fakeStore().store;
    // @ts-expect-error a store without partition leases and a reader cannot relay: the type says so, not a run-time check
    expect(new Outbox(claimless).store).toBe(claimless);
  });

  it('notifyCommitted wakes every relay it created and tells the commit notifier', () => {
    const notified: string[] = [];
    const outbox = new Outbox(fakeStore().store, { commitNotifier: { notify: () => void notified.push('notify'), close: async () => undefined } });
    const relays = [outbox.createRelay(publisher), outbox.createRelay(publisher)];
    const wakes = relays.map((relay) => vi.spyOn(relay, 'wake'));
    outbox.notifyCommitted();
    expect(wakes.map((wake) => wake.mock.calls.length)).toEqual([1, 1]);
    expect(notified).toEqual(['notify']);
  });

  it('transaction runs the work in the runner, then wakes the relays once it committed; a rollback wakes nothing', async () => {
    const fake = fakeStore();
    const outbox = new Outbox(fake.store);
    const wake = vi.spyOn(outbox.createRelay(publisher), 'wake');
    const runner = { transaction: <T>(work: (t: FakeTx) => Promise<T>) => work(tx) };
    const id = await outbox.transaction(runner, async (t) => {
      const stored = await outbox.enqueue(t, message(1));
      expect(wake).not.toHaveBeenCalled();
      return stored;
    });
    expect(fake.inserts.map((insert) => [insert.tx, insert.messages[0]?.id])).toEqual([[tx, id]]);
    expect(wake).toHaveBeenCalledTimes(1);
    await expect(outbox.transaction(runner, async () => Promise.reject(new Error('rolled back')))).rejects.toThrow('rolled back');
    expect(wake).toHaveBeenCalledTimes(1);
  });

  it('notifyCommitted with no relay is a no-op', () => {
    expect(() => new Outbox(fakeStore().store).notifyCommitted()).not.toThrow();
  });
});

describe('Outbox.close', () => {
  it('stops every relay it created, then closes each publisher once and the commit notifier', async () => {
    const events: string[] = [];
    const counting = (name: string): Publisher => ({
      name,
      capabilities: {},
      publish: async () => undefined,
      close: async () => void events.push(`close ${name}`),
    });
    const outbox = new Outbox(fakeStore().store, { commitNotifier: { notify: () => undefined, close: async () => void events.push('close notifier') } });
    const shared = counting('shared');
    const relays = [
      outbox.createRelay(shared, { pollIntervalMs: 5 }),
      outbox.createRelay(shared, { pollIntervalMs: 5 }),
      outbox.createRelay(counting('own'), { pollIntervalMs: 5 }),
    ];
    for (const relay of relays) relay.start();
    expect(relays.every((relay) => relay.running)).toBe(true);
    await Promise.all([outbox.close(), outbox.close()]);
    expect(relays.some((relay) => relay.running)).toBe(false);
    expect(events.sort()).toEqual(['close notifier', 'close own', 'close shared']);
    expect(() => outbox.createRelay(shared)).toThrow(expect.objectContaining({ code: 'OUTBOXER_CLOSED' }));
  });

  it('refuses a pool-shaped or database-shaped handle at run time, before anything reaches the store', async () => {
    const fake = fakeStore();
    const outbox = new Outbox<unknown>(fake.store as OutboxStore);
    const pool = { totalCount: 1, idleCount: 1, connect: async () => undefined, query: async () => ({ rows: [] }) };
    const database = { transaction: async () => undefined, close: async () => undefined, query: async () => ({ rows: [] }) };
    for (const handle of [pool, database]) {
      // @ts-expect-error refused in the types too; this checks the run-time half
      await expect(outbox.enqueue(handle, message(1))).rejects.toMatchObject({
        code: 'OUTBOXER_NOT_IN_TRANSACTION',
        message: expect.stringContaining('outbox.transaction(db'),
      });
    }
    expect(fake.inserts).toEqual([]);
  });
});
