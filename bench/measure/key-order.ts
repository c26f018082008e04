import type { OutboxMessage, Publisher } from '../../src/index.js';

/** The message number at the start of every bench body: `{"n": 12, ...}` (jsonb) or `{"n":12,...}` (JSON.stringify). */
const NUMBER = /^\{"n":\s?(\d+)/;

/**
 * Per-key order as the relay publishes: a publish call whose message number is lower than one already
 * published for the same key is a violation. In a pre-loaded backlog the numbers follow each key's intended
 * order (bulk loads insert them in order), so a relay that keeps key order scores zero.
 */
export class KeyOrderWatch {
  readonly #last = new Map<string, number>();
  #violations = 0;

  get violations(): number {
    return this.#violations;
  }

  see(message: OutboxMessage): void {
    if (typeof message.body !== 'string') return;
    const match = NUMBER.exec(message.body);
    if (match === null || message.key === null) return;
    const n = Number(match[1]);
    const last = this.#last.get(message.key);
    if (last !== undefined && n < last) this.#violations++;
    else this.#last.set(message.key, n);
  }

  wrap(publisher: Publisher): Publisher {
    return {
      name: publisher.name,
      get capabilities() {
        return publisher.capabilities;
      },
      publish: (message: OutboxMessage) => {
        this.see(message);
        return publisher.publish(message);
      },
      close: () => publisher.close(),
    };
  }
}
