import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/core/errors.js';
import { Relay, type StoreForRelay } from '../../../src/core/relay.js';
import type { RelayOptionsInput } from '../../../src/core/relay-options.js';
import { fromPgPool } from '../../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../../src/stores/postgres/postgres-store.js';
import { RecordingPublisher } from '../../support/recording-publisher.js';

// never connected: nothing here runs a statement
const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
afterAll(() => pool.end());

function refusal(make: () => unknown): ConfigurationError {
  try {
    make();
  } catch (error) {
    if (error instanceof ConfigurationError) return error;
    throw error;
  }
  throw new Error('expected a ConfigurationError');
}

describe('Relay', () => {
  it('runs a partition relay (engine v2, the default and only engine)', () => {
    const relay = new Relay(new PostgresOutboxStore(fromPgPool(pool)), new RecordingPublisher());
    expect(relay.options.engine).toBe('v2');
    expect(relay.running).toBe(false);
    expect(new Relay(new PostgresOutboxStore(fromPgPool(pool)), new RecordingPublisher(), { engine: 'v2' }).options.engine).toBe('v2');
  });

  it("refuses engine 'v1', which was removed, saying so", () => {
    const error = refusal(
      () => new Relay(new PostgresOutboxStore(fromPgPool(pool)), new RecordingPublisher(), { engine: 'v1' } as unknown as RelayOptionsInput),
    );
    expect(error.code).toBe('OUTBOXER_INVALID_OPTION');
    expect(error.options).toEqual(['engine']);
    expect(error.message).toContain('engine v1 was removed before any release');
  });

  it.each(['maxHandoff', 'fullSweepIntervalMs'])('refuses %s, an option of engine v1, saying so', (option) => {
    const error = refusal(
      () => new Relay(new PostgresOutboxStore(fromPgPool(pool)), new RecordingPublisher(), { [option]: 1000 } as unknown as RelayOptionsInput),
    );
    expect(error.code).toBe('OUTBOXER_INVALID_OPTION');
    expect(error.options).toEqual([option]);
    expect(error.message).toContain('engine v1');
  });

  it('takes only a store with partition leases and a reader: the type says so, no run-time check is left to fail', () => {
    // @ts-expect-error a store without leases and a reader is not a StoreForRelay
    const store: StoreForRelay = { purgePublished: () => Promise.resolve(0), purgeIdempotencyKeys: () => Promise.resolve(0) };
    expect(store).not.toHaveProperty('leases');
  });
});
