import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { resolveInboxOptions } from '../../src/consumer/inbox-options.js';
import { INBOX_RETENTION_DEFAULTS, resolveInboxRetentionOptions } from '../../src/consumer/inbox-retention.js';
import type { Inbox } from '../../src/consumer/inbox.js';
import { NATS_CONSUMER_DEFAULTS, resolveNatsConsumerOptions } from '../../src/brokers/nats/consumer/options.js';
import { RABBITMQ_CONSUMER_DEFAULTS, resolveRabbitMqConsumerOptions } from '../../src/brokers/rabbitmq/consumer/options.js';

const inbox = { handleDelivery: async () => undefined } as unknown as Inbox<unknown>;

function refusal(run: () => unknown): ConfigurationError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigurationError) return error;
    throw error;
  }
  throw new Error('expected a ConfigurationError, nothing was thrown');
}

describe('nats consumer options', () => {
  const base = { servers: 'nats://u:secret-pass@127.0.0.1:4222', stream: 'ORDERS', durable: 'billing', inbox };

  it('resolves documented defaults, frozen, the connection by the publisher rules', () => {
    const resolved = resolveNatsConsumerOptions(base);
    expect(resolved).toMatchObject({
      ackWaitMs: NATS_CONSUMER_DEFAULTS.ackWaitMs,
      maxDeliver: -1,
      maxAckPending: 16,
      manageConsumer: true,
      stopTimeoutMs: 30_000,
      filterSubject: undefined,
    });
    expect(resolved.connection.name).toBe('outboxer-consumer');
    expect(resolved.connection.auth).toEqual({ user: 'u', pass: 'secret-pass' });
    expect(Object.isFrozen(resolved)).toBe(true);
    expect(Object.isFrozen(resolved.hooks)).toBe(true);
  });

  it.each<[string, Record<string, unknown>]>([
    ['maxDeliver', { maxDeliver: 0 }],
    ['ackWaitMs', { ackWaitMs: 999 }],
    ['filterSubject', { filterSubject: 'orders..x' }],
    ['manageConsumer', { manageConsumer: 'yes' }],
    ['durable', { durable: 'a.b' }],
    ['connectTimeoutMs', { connectTimeoutMs: 0 }],
  ])('refuses a bad %s, naming it as the consumer option', (option, extra) => {
    const error = refusal(() => resolveNatsConsumerOptions({ ...base, ...extra } as never));
    expect(error.code).toBe('OUTBOXER_INVALID_OPTION');
    expect(error.message).toContain(`nats consumer option ${option}: `);
    expect(error.options).toEqual([option]);
    expect(error.message).not.toContain('secret-pass');
  });

  it('reports an unknown option before other faults', () => {
    const error = refusal(() => resolveNatsConsumerOptions({ ...base, inbox: {}, ackWait: 5 } as never));
    expect(error.options).toEqual(['ackWait']);
    expect(error.message).toMatch(
      /^nats consumer option ackWait: is not an option \(known: stream, durable, inbox, .*servers, connectTimeoutMs, name, logger, hooks\)$/,
    );
  });
});

describe('rabbitmq consumer options', () => {
  const base = { url: 'amqp://guest:secret-pass@127.0.0.1:5672', queue: 'billing', inbox };

  it('resolves documented defaults, frozen, with the URL out of sight', () => {
    const resolved = resolveRabbitMqConsumerOptions(base);
    expect(resolved).toMatchObject({
      prefetch: RABBITMQ_CONSUMER_DEFAULTS.prefetch,
      bindingKeys: ['#'],
      deadLetter: 'reject',
      reconnectDelayMs: 1000,
      maxReconnectDelayMs: 30_000,
      stopTimeoutMs: 30_000,
      exchange: 'outbox',
      queueArguments: {},
    });
    expect(resolved.clientName).toMatch(/^outboxer-consumer@/);
    expect(JSON.stringify(resolved)).not.toContain('secret-pass');
    expect(resolved.url).toContain('secret-pass');
    expect(Object.isFrozen(resolved)).toBe(true);
    expect(resolveRabbitMqConsumerOptions({ ...base, singleActiveConsumer: true }).queueArguments).toEqual({ 'x-single-active-consumer': true });
    expect(resolveRabbitMqConsumerOptions({ ...base, reconnectDelayMs: 60_000 }).maxReconnectDelayMs).toBe(60_000);
  });

  it('refuses a reconnect ceiling below the first delay, naming both and the fix', () => {
    const error = refusal(() => resolveRabbitMqConsumerOptions({ ...base, reconnectDelayMs: 5000, maxReconnectDelayMs: 4000 }));
    expect(error.options).toEqual(['maxReconnectDelayMs', 'reconnectDelayMs']);
    expect(error.message).toMatch(/raise maxReconnectDelayMs or lower reconnectDelayMs/);
  });

  it.each<[string, Record<string, unknown>]>([
    ['queue', { queue: 'amq.x' }],
    ['prefetch', { prefetch: 0 }],
    ['deadLetter', { deadLetter: 'drop' }],
    ['bindingKeys', { bindingKeys: 'orders.#' }],
    ['heartbeatSeconds', { heartbeatSeconds: -1 }],
    ['url', { url: 'http://guest:secret-pass@h' }],
  ])('refuses a bad %s, naming it as the consumer option', (option, extra) => {
    const error = refusal(() => resolveRabbitMqConsumerOptions({ ...base, ...extra } as never));
    expect(error.message).toContain(`rabbitmq consumer option ${option}: `);
    expect(error.options).toEqual([option]);
    expect(error.message).not.toContain('secret-pass');
  });
});

describe('consumer batching (maxBatch)', () => {
  const instrumentation = { process: async () => undefined };
  const batching = { handleDelivery: async () => undefined, store: { claimMany: async () => [] } } as unknown as Inbox<unknown>;
  const rabbit = { url: 'amqp://127.0.0.1', queue: 'q', inbox: batching };
  const nats = { servers: 'nats://127.0.0.1:4222', stream: 'ORDERS', durable: 'billing', inbox: batching };

  it('defaults to half the window, at most 64, with lanes that fill the window', () => {
    expect(resolveRabbitMqConsumerOptions(rabbit).batching).toEqual({ maxBatch: 8, lanes: 2 });
    expect(resolveRabbitMqConsumerOptions({ ...rabbit, prefetch: 1000 }).batching).toEqual({ maxBatch: 64, lanes: 16 });
    expect(resolveRabbitMqConsumerOptions({ ...rabbit, prefetch: 1 }).batching).toEqual({ maxBatch: 1, lanes: 2 });
    expect(resolveNatsConsumerOptions(nats).batching).toEqual({ maxBatch: 8, lanes: 2 });
    expect(resolveNatsConsumerOptions({ ...nats, maxAckPending: 40, maxBatch: 4 }).batching).toEqual({ maxBatch: 4, lanes: 10 });
    expect(Object.isFrozen(resolveNatsConsumerOptions(nats).batching)).toBe(true);
  });

  it('is off by default with an instrumentation, and refused above 1 with one, naming both options and the fix', () => {
    expect(resolveRabbitMqConsumerOptions({ ...rabbit, instrumentation }).batching.maxBatch).toBe(1);
    expect(resolveNatsConsumerOptions({ ...nats, instrumentation, maxBatch: 1 }).batching.maxBatch).toBe(1);
    const refused = refusal(() => resolveRabbitMqConsumerOptions({ ...rabbit, instrumentation, maxBatch: 8 }));
    expect(refused.code).toBe('OUTBOXER_INVALID_OPTION');
    expect(refused.options).toEqual(['maxBatch', 'instrumentation']);
    expect(refused.message).toMatch(/^rabbitmq consumer option maxBatch: 8 cannot go with instrumentation.*leave maxBatch unset \(or 1\)/);
  });

  it('is off by default, and refused above 1, with an inbox store that claims one by one', () => {
    const oneByOne = { handleDelivery: async () => undefined, store: { claim: async () => ({}) } } as unknown as Inbox<unknown>;
    expect(resolveNatsConsumerOptions({ ...nats, inbox: oneByOne }).batching.maxBatch).toBe(1);
    const refused = refusal(() => resolveNatsConsumerOptions({ ...nats, inbox: oneByOne, maxBatch: 4 }));
    expect(refused.options).toEqual(['maxBatch', 'inbox']);
    expect(refused.message).toMatch(/^nats consumer option maxBatch: 4 cannot go with this inbox's store, which claims messages one by one/);
  });

  it.each([0, 1001, 2.5, '8'])('refuses maxBatch %s, naming the option', (maxBatch) => {
    const refused = refusal(() => resolveNatsConsumerOptions({ ...nats, maxBatch: maxBatch as number }));
    expect(refused.options).toEqual(['maxBatch']);
    expect(refused.message).toMatch(/^nats consumer option maxBatch: /);
  });
});

describe('inbox options', () => {
  it('refuses retry.maxDelayMs below retry.baseDelayMs, naming both and the fix', () => {
    const error = refusal(() => resolveInboxOptions({ consumer: 'billing', retry: { baseDelayMs: 5000, maxDelayMs: 1000 } }));
    expect(error.options).toEqual(['retry.maxDelayMs', 'retry.baseDelayMs']);
    expect(error.message).toMatch(/raise retry.maxDelayMs or lower retry.baseDelayMs/);
  });

  it('names an unknown option', () => {
    expect(refusal(() => resolveInboxOptions({ consumer: 'billing', retries: 3 } as never)).options).toEqual(['retries']);
  });

  it('resolves retention defaults, frozen, and names a bad one', () => {
    const resolved = resolveInboxRetentionOptions();
    expect(resolved).toEqual(INBOX_RETENTION_DEFAULTS);
    expect(Object.isFrozen(resolved)).toBe(true);
    const error = refusal(() => resolveInboxRetentionOptions({ batchSize: 0 }));
    expect(error.message).toBe('inbox retention option batchSize: must be a whole number from 1 to 100000');
    expect(error.options).toEqual(['batchSize']);
  });
});
