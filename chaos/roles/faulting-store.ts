import type { OutboxStore, PartitionReader } from '../../src/core/ports.js';
import type { Journal } from '../journal.js';
import type { FaultPlan } from './faulting-publisher.js';
import { faultingReader } from './faulting-reader.js';

/**
 * The store with its partition reader decorated (`faultingReader`): reads and completions are journaled and the
 * process is killed at the planned point. Every other operation passes through untouched (a Proxy, so that the
 * port may grow).
 */
export function faultingStore<S extends OutboxStore & { readonly reader: PartitionReader }>(
  inner: S,
  journal: Journal,
  tokens: Map<string, string>,
  plan: FaultPlan,
): S {
  const reader = faultingReader(inner.reader, journal, tokens, plan);
  return new Proxy(inner, {
    get(target, property, receiver) {
      if (property === 'reader') return reader;
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
