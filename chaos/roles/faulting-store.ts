import type { Claim, ClaimRequest, FailedMessage, OutboxStore, PartitionReader } from '../../src/core/ports.js';
import type { Journal } from '../journal.js';
import { type FaultPlan, killSelf } from './faulting-publisher.js';
import { faultingReader } from './faulting-reader.js';

/**
 * A decorating OutboxStore for the relay role: journals claims and marks (with how many rows each mark
 * touched: fewer means fenced), remembers which claim token holds each id, and kills the process right
 * after a claim, or after the broker confirmed but before the mark, at the planned occurrence. Every
 * other operation passes through untouched (a Proxy, so that the port may grow).
 */
export function faultingStore(inner: OutboxStore, journal: Journal, tokens: Map<string, string>, plan: FaultPlan): OutboxStore {
  let claims = 0;
  let marks = 0;
  const overrides: Partial<OutboxStore> = {
    async claim(request: ClaimRequest): Promise<Claim> {
      const claim = await inner.claim(request);
      if (claim.messages.length === 0) return claim;
      claims++;
      for (const message of claim.messages) tokens.set(message.id, claim.token);
      journal.write({ e: 'claim', tok: claim.token, ids: claim.messages.map((m) => m.id) });
      if (plan.point === 'after-claim' && claims === plan.at) killSelf(journal, plan.point);
      return claim;
    },
    async markPublished(token: string, ids: readonly string[]): Promise<number> {
      if (ids.length > 0) {
        marks++;
        if (plan.point === 'after-confirm-before-mark' && marks === plan.at) killSelf(journal, plan.point);
      }
      try {
        const n = await inner.markPublished(token, ids);
        if (ids.length > 0) journal.write({ e: 'mark', tok: token, ids, n });
        return n;
      } catch (error) {
        journal.write({ e: 'markError', tok: token, ids });
        throw error;
      }
    },
    async markFailed(token: string, failures: readonly FailedMessage[]): Promise<number> {
      const n = await inner.markFailed(token, failures);
      if (failures.length > 0) journal.write({ e: 'markFailed', tok: token, ids: failures.map((f) => f.id), n });
      return n;
    },
    async release(token: string, ids: readonly string[], lastError?: string, delayMs?: number): Promise<number> {
      const n = await inner.release(token, ids, lastError, delayMs);
      if (ids.length > 0) journal.write({ e: 'release', tok: token, ids, n });
      return n;
    },
  };
  // Engine v2 reads through `store.reader` (once its store has one): decorated so that v2 runs are journaled too.
  const reader = (inner as { readonly reader?: PartitionReader }).reader;
  const decoratedReader = reader === undefined ? undefined : faultingReader(reader, journal, tokens, plan);
  return new Proxy(inner, {
    get(target, property, receiver) {
      if (property === 'reader' && decoratedReader !== undefined) return decoratedReader;
      const own = (overrides as Record<PropertyKey, unknown>)[property];
      if (own !== undefined) return own;
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
