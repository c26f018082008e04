import type { OutboxStore } from '../../src/core/ports.js';
import type { SqlExecutor } from '../../src/stores/postgres/database.js';

/** A store (our own port) that counts the claims made through it, and how many ran at once. */
export function countingClaims(store: OutboxStore<SqlExecutor>): {
  store: OutboxStore<SqlExecutor>;
  claims: () => number;
  maxConcurrentClaims: () => number;
} {
  let claims = 0;
  let inClaim = 0;
  let maxConcurrent = 0;
  const counted = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'claim') {
        return async (...args: Parameters<OutboxStore['claim']>) => {
          claims++;
          maxConcurrent = Math.max(maxConcurrent, ++inClaim);
          try {
            return await target.claim(...args);
          } finally {
            inClaim--;
          }
        };
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: counted, claims: () => claims, maxConcurrentClaims: () => maxConcurrent };
}
