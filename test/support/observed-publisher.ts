import type { Publisher } from '../../src/core/ports.js';

/** A publisher wrapper (our own port around the real one) that counts publishes per topic and records confirms in order. */
export function observedPublisher(inner: Publisher) {
  const calls = new Map<string, number>();
  const confirmed: string[] = [];
  const publisher: Publisher = {
    name: inner.name,
    get capabilities() {
      return inner.capabilities;
    },
    async publish(message) {
      calls.set(message.topic, (calls.get(message.topic) ?? 0) + 1);
      await inner.publish(message);
      confirmed.push(message.id);
    },
    close: () => inner.close(),
  };
  return { publisher, calls: (topic: string) => calls.get(topic) ?? 0, confirmed };
}
