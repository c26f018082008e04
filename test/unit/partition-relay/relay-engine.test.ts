import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/core/errors.js';
import { Relay, type StoreForRelay } from '../../../src/core/relay.js';
import { fromPgPool } from '../../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../../src/stores/postgres/postgres-store.js';
import { RecordingPublisher } from '../../support/recording-publisher.js';

// never connected: nothing here runs a statement
const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
afterAll(() => pool.end());

describe("Relay with engine 'v2'", () => {
  it('runs a partition relay: no hand-off, no claim round', async () => {
    const relay = new Relay(new PostgresOutboxStore(fromPgPool(pool)), new RecordingPublisher(), { engine: 'v2' });
    expect(relay.partitionRelay).toBeDefined();
    expect(relay.partitionRelay?.options.engine).toBe('v2');
    expect(relay.acceptsHandoff).toBe(false);
    expect(relay.running).toBe(false);
    await expect(relay.runOnce()).rejects.toThrow(/runOnce is engine v1's claim round/);
  });

  it('stays the claim relay under engine v1', () => {
    const relay = new Relay(new PostgresOutboxStore(fromPgPool(pool)), new RecordingPublisher(), { engine: 'v1' });
    expect(relay.partitionRelay).toBeUndefined();
    expect(relay.options.engine).toBe('v1');
  });

  it('runs the partition relay by default (engine v2)', () => {
    const relay = new Relay(new PostgresOutboxStore(fromPgPool(pool)), new RecordingPublisher());
    expect(relay.options.engine).toBe('v2');
    expect(relay.partitionRelay).toBeDefined();
  });

  it('refuses a store without partition leases and reader, naming the engine option', () => {
    const store = {} as unknown as StoreForRelay;
    const error = (() => {
      try {
        new Relay(store, new RecordingPublisher(), { engine: 'v2' });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).options).toEqual(['engine']);
    expect((error as Error).message).toContain("engine 'v1'");
  });
});
