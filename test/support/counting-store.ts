import type { ClaimRequest, OutboxStore } from '../../src/core/ports.js';
import type { SqlExecutor } from '../../src/stores/postgres/database.js';

/** A store (our own port) that counts the claims made through it, how many ran at once, what they asked and got. */
export function countingClaims(store: OutboxStore<SqlExecutor>): {
  store: OutboxStore<SqlExecutor>;
  claims: () => number;
  maxConcurrentClaims: () => number;
  requests: () => readonly ClaimRequest[];
  claimedIds: () => ReadonlySet<string>;
} {
  const requests: ClaimRequest[] = [];
  const claimedIds = new Set<string>();
  let claims = 0;
  let inClaim = 0;
  let maxConcurrent = 0;
  const counted = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'claim') {
        return async (...args: Parameters<OutboxStore['claim']>) => {
          claims++;
          requests.push(args[0]);
          maxConcurrent = Math.max(maxConcurrent, ++inClaim);
          try {
            const claim = await target.claim(...args);
            for (const message of claim.messages) claimedIds.add(message.id);
            return claim;
          } finally {
            inClaim--;
          }
        };
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: counted, claims: () => claims, maxConcurrentClaims: () => maxConcurrent, requests: () => requests, claimedIds: () => claimedIds };
}
