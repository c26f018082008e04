import { describe, expect, it } from 'vitest';
import { envelopeShaper, Destinations } from '../../src/core/destinations.js';
import { ConfigurationError, MessageValidationError } from '../../src/core/errors.js';
import { Routes } from '../../src/core/routes.js';
import { validateMessage } from '../../src/core/validate-message.js';
import { FakePublisher, msg } from './publish-claim-fixtures.js';

const limits = { maxPayloadBytes: 1024 };
const message = (topic: string, extra: Record<string, unknown> = {}) => validateMessage({ topic, type: 't', payload: {}, ...extra }, limits);

describe('Routes', () => {
  const routes = new Routes([
    { topic: 'orders.created', to: ['default', 'partner'] },
    { topic: 'orders.*', to: ['partner'] },
    { topic: 'billing.#', to: ['ledger', 'default'] },
  ]);

  it('matches exact topics, * for one part and # for zero or more, first match winning', () => {
    expect(routes.destinationsOf('orders.created')).toEqual([null, 'partner']);
    expect(routes.destinationsOf('orders.shipped')).toEqual(['partner']);
    expect(routes.destinationsOf('orders.shipped.late')).toBeUndefined();
    expect(routes.destinationsOf('billing.invoice.paid')).toEqual(['ledger', null]);
    expect(routes.destinationsOf('billing')).toEqual(['ledger', null]);
    expect(routes.destinationsOf('billings')).toBeUndefined();
    expect(routes.destinationsOf('users.created')).toBeUndefined();
  });

  it('writes one row per destination: the first keeps the id and key, the others get ids derived from it', () => {
    const first = message('orders.created', { idempotencyKey: 'order-7' });
    const { rows, firstRows } = routes.expand([first, message('users.created')], new Set());
    expect(rows.map((r) => r.destination)).toEqual([null, 'partner', null]);
    expect(firstRows).toEqual([0, 2]);
    expect(rows[0]?.id).toBe(first.id);
    expect(rows[1]?.id).not.toBe(first.id);
    expect(rows[1]?.idempotencyKey).toBe('order-7\u001fpartner');
    // derived, so an enqueue repeated with the same id collides again on every row
    expect(routes.expand([first], new Set()).rows[1]?.id).toBe(rows[1]?.id);
  });

  it('leaves a message that names its destination alone', () => {
    const named = message('orders.created', { destination: 'ledger' });
    expect(routes.expand([named], new Set([0])).rows).toEqual([named]);
  });

  it('refuses an idempotency key that no longer fits once the destination is appended', () => {
    const long = message('orders.created', { idempotencyKey: 'k'.repeat(510) });
    expect(() => routes.expand([long], new Set())).toThrow(MessageValidationError);
  });

  it.each([
    [[{ topic: '', to: ['a'] }], /routes\[0\]\.topic/],
    [[{ topic: 'a.>.b', to: ['a'] }], /routes\[0\]\.topic "a\.>\.b" is not a topic pattern/],
    [[{ topic: 'a', to: [] }], /routes\[0\]\.to must list/],
    [[{ topic: 'a', to: ['x y'] }], /destination "x y" is invalid/],
    [[{ topic: 'a', to: ['p', 'p'] }], /twice/],
    ['orders', /routes must be a list/],
  ])('refuses bad routes %j', (input, error) => {
    expect(() => new Routes(input as never)).toThrow(error);
  });
});

describe('validateMessage destination', () => {
  it('stores default as none and refuses a bad name', () => {
    expect(message('a', { destination: 'default' }).destination).toBeNull();
    expect(message('a', { destination: 'partner-1' }).destination).toBe('partner-1');
    expect(() => message('a', { destination: '../x' })).toThrow(/destination "\.\.\/x" is invalid/);
  });
});

describe('envelopeShaper', () => {
  const full = msg('k1', { headers: { tenant: 't1', 'correlation-id': 'c1', traceparent: '00-1-2-01' } });

  it('keeps the message whole by default', () => {
    expect(envelopeShaper('p', {})(full)).toBe(full);
  });

  it('keeps only the listed headers, case-insensitively, and drops the key when asked', () => {
    const shaped = envelopeShaper('p', { headers: ['Correlation-Id'], key: false })(full);
    expect(shaped.headers).toEqual({ 'correlation-id': 'c1' });
    expect(shaped.key).toBeNull();
    expect(shaped.body).toBe(full.body);
    expect(envelopeShaper('p', { headers: 'none' })(full).headers).toEqual({});
  });

  it('refuses what it does not know', () => {
    expect(() => envelopeShaper('p', { type: false } as never)).toThrow(/destinations\.p\.envelope: unknown field "type"/);
    expect(() => envelopeShaper('p', { headers: 'some' } as never)).toThrow(ConfigurationError);
    expect(() => envelopeShaper('p', { headers: ['bad name'] })).toThrow(/header name/);
  });
});

describe('Destinations', () => {
  it('maps rows without a destination to the relay publisher and refuses a bad set', () => {
    const own = new FakePublisher();
    const partner = new FakePublisher();
    const destinations = new Destinations(own, { partner: { publisher: partner } });
    expect(destinations.of(null)?.publisher).toBe(own);
    expect(destinations.of('partner')?.publisher).toBe(partner);
    expect(destinations.of('ledger')).toBeUndefined();
    expect(destinations.fansOut).toBe(true);
    expect(() => new Destinations(own, { default: { publisher: partner } })).toThrow(/relay's own publisher/);
    expect(() => new Destinations(own, { partner: {} as never })).toThrow(/needs a publisher/);
  });
});
