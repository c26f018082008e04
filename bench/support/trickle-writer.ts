import type pg from 'pg';
import { DEFAULT_WAKE_CHANNEL } from '../../src/stores/postgres/index.js';
import { MESSAGE_TYPE } from './workload.js';

/**
 * A light steady load beside whatever the scenario does: message n (`{"n": n}`, key `k-(n mod keys)`) committed
 * alone every `intervalMs` by plain SQL on its own connection, with the wake-up `NOTIFY` in the same statement.
 * One connection commits them one after another, so each key's numbers increase in commit (and seq) order.
 */
export class TrickleWriter {
  readonly #client: pg.Client;
  readonly #sql: string;
  readonly #topic: string;
  readonly #keys: number;
  readonly #intervalMs: number;
  #written = 0;
  #stopped = false;
  #loop: Promise<void> | undefined;
  #failure: { readonly error: unknown } | undefined;

  constructor(client: pg.Client, schema: string, table: string, workload: { topic: string; keys: number; intervalMs: number }) {
    this.#client = client;
    this.#topic = workload.topic;
    this.#keys = workload.keys;
    this.#intervalMs = workload.intervalMs;
    this.#sql = `WITH written AS (INSERT INTO "${schema}"."${table}" (topic, type, key, payload) VALUES ($1, $2, $3, jsonb_build_object('n', $4::int)) RETURNING 1)
      SELECT pg_notify($5, '') FROM written`;
  }

  get written(): number {
    return this.#written;
  }

  start(): void {
    // kept, not left unhandled (which would end the process), and thrown by stop()
    this.#loop ??= this.#run().catch((error: unknown) => {
      this.#failure = { error: error ?? new Error('the trickle writer failed') };
    });
  }

  /** Stops writing; resolves with how many messages were committed, or rejects with the write that failed. */
  async stop(): Promise<number> {
    this.#stopped = true;
    await this.#loop;
    if (this.#failure !== undefined) throw this.#failure.error;
    return this.#written;
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      const n = this.#written;
      await this.#client.query(this.#sql, [this.#topic, MESSAGE_TYPE, `k-${n % this.#keys}`, n, DEFAULT_WAKE_CHANNEL]);
      this.#written = n + 1;
      await new Promise((resolve) => setTimeout(resolve, this.#intervalMs));
    }
  }
}
