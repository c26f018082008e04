import { describe, expect, it } from 'vitest';
import { OriginSlots } from '../../src/brokers/webhook/origin-slots.js';
import { timeoutError } from '../../src/brokers/webhook/errors.js';
import { parseEndpoint, type WebhookEndpoint } from '../../src/brokers/webhook/endpoint.js';

const never = new AbortController().signal;

describe('webhook request slots per origin', () => {
  it('grants up to the limit per origin, then hands each freed slot to the longest waiter', async () => {
    const slots = new OriginSlots(2);
    const a = await slots.acquire('https://a', never);
    await slots.acquire('https://a', never);
    await slots.acquire('https://b', never); // another origin has slots of its own
    const order: string[] = [];
    const third = slots.acquire('https://a', never).then((release) => (order.push('third'), release));
    const fourth = slots.acquire('https://a', never).then((release) => (order.push('fourth'), release));
    await Promise.resolve();
    expect(order).toEqual([]);
    expect(slots.inFlight('https://a')).toBe(2);
    a();
    a(); // a second release of the same slot frees nothing
    (await third)();
    await fourth;
    expect(order).toEqual(['third', 'fourth']);
    expect(slots.inFlight('https://a')).toBe(2);
  });

  it('gives up waiting when the signal aborts, leaving its place to the next waiter; an idle origin is forgotten', async () => {
    const slots = new OriginSlots(1);
    const holder = await slots.acquire('https://a', never);
    const deadline = new AbortController();
    const gaveUp = slots.acquire('https://a', deadline.signal).then(
      () => 'granted',
      (reason: unknown) => reason,
    );
    const next = slots.acquire('https://a', never);
    deadline.abort('deadline');
    expect(await gaveUp).toBe('deadline');
    holder();
    (await next)();
    expect(slots.inFlight('https://a')).toBe(0);
  });

  it('says a publish that timed out waiting for a slot was not sent', () => {
    const endpoint = parseEndpoint('https://hooks.example.com/secret-path', 'default url') as WebhookEndpoint;
    const error = timeoutError({ id: 'm-1', endpoint, timeoutMs: 400, maxRetryAfterMs: 0, secrets: [] }, false);
    expect(error.code).toBe('OUTBOXER_PUBLISH_TIMEOUT');
    expect(error.message).toMatch(/m-1 waited 400 ms .*request slot to https:\/\/hooks\.example\.com and was not sent/);
    expect(error.message).not.toContain('secret-path');
  });
});
