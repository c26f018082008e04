import { closeSync, openSync, writeSync } from 'node:fs';
import pg from 'pg';
import { leaseTables } from '../src/stores/postgres/leases/lease-tables.js';
import { type Environment, SERVICES } from './environment.js';

/** One relays row as a sample shows it, with how many partitions name it as owner. */
export interface SampledRelay {
  /** The relay slot, from its name (`chaos-relay-<schema>-<slot>/<pid>`); -1 if the name is not a chaos relay's. */
  readonly slot: number;
  readonly pid: number;
  /** Its lease runs past the statement's `now()`. */
  readonly live: boolean;
  readonly leaving: boolean;
  /** Its row reports broker trouble (the `trouble` column is set). */
  readonly trouble: boolean;
  readonly held: number;
}

/** The partitions and relays tables at one moment (one statement, one snapshot). */
export interface OwnershipSample {
  /** When the statement was sent (harness clock, `Date.now()`, the clock of the fault log). */
  readonly t: number;
  /** Partitions no relay owns (`owner IS NULL`). */
  readonly free: number;
  /** Partitions whose owner is not a live relay (its lease ran out, or its row is gone): nobody serves them. */
  readonly orphaned: number;
  readonly relays: readonly SampledRelay[];
}

/** Partitions nobody serves in a sample: free, or owned by a relay that is not live. */
export const unowned = (sample: OwnershipSample): number => sample.free + sample.orphaned;

/** Every partition of a sample, wherever it is. */
export const partitionCount = (sample: OwnershipSample): number =>
  sample.free + sample.orphaned + sample.relays.filter((r) => r.live).reduce((sum, r) => sum + r.held, 0);

const NAME = /-(\d+)\/(\d+)$/;

/** The slot and pid in a chaos relay's owner name (`<applicationName>/<pid>`, applicationName ending in `-<slot>`). */
export function parseRelayName(name: string): { slot: number; pid: number } {
  const match = NAME.exec(name);
  return match === null ? { slot: -1, pid: -1 } : { slot: Number(match[1]), pid: Number(match[2]) };
}

/** One statement (one snapshot) that reads a sample of the scenario's `outbox` table. */
export function ownershipSql(schema: string): string {
  const { partitions, relays } = leaseTables({ schema, table: 'outbox' });
  return `SELECT
      (SELECT count(*)::int FROM ${partitions} WHERE owner IS NULL) AS free,
      (SELECT count(*)::int FROM ${partitions} p WHERE p.owner IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM ${relays} r WHERE r.relay_id = p.owner AND r.expires_at > now())) AS orphaned,
      (SELECT COALESCE(json_agg(json_build_object('name', r.name, 'live', r.expires_at > now(), 'leaving', r.leaving,
         'trouble', r.trouble IS NOT NULL, 'held', (SELECT count(*) FROM ${partitions} p WHERE p.owner = r.relay_id))), '[]'::json)
         FROM ${relays} r) AS relays`;
}

export interface OwnershipRow {
  readonly free: number;
  readonly orphaned: number;
  readonly relays: readonly { readonly name: string; readonly live: boolean; readonly leaving: boolean; readonly trouble: boolean; readonly held: number }[];
}

export function toSample(t: number, row: OwnershipRow): OwnershipSample {
  return {
    t,
    free: row.free,
    orphaned: row.orphaned,
    relays: row.relays.map((r) => ({ ...parseRelayName(r.name), live: r.live, leaving: r.leaving, trouble: r.trouble, held: Number(r.held) })),
  };
}

/**
 * Reads the scenario's `<table>_partitions` and `<table>_relays` every `intervalMs` on a connection of its own
 * (direct, never through the relays' proxies, so faults do not blind it), and appends each sample to `path`
 * (JSON lines). Read-only: it takes no lock a relay waits for.
 */
export class OwnershipSampler {
  readonly samples: OwnershipSample[] = [];
  readonly #client: pg.Client;
  readonly #sql: string;
  readonly #fd: number;
  #stopped = false;
  #loop: Promise<void> = Promise.resolve();

  private constructor(
    env: Pick<Environment, 'schema'>,
    path: string,
    private readonly intervalMs: number,
  ) {
    this.#sql = ownershipSql(env.schema);
    this.#client = new pg.Client({
      host: SERVICES.pgHost,
      port: SERVICES.pgPort,
      database: SERVICES.pgDatabase,
      user: 'postgres',
      application_name: `chaos-sampler-${env.schema}`,
      statement_timeout: 2000,
    });
    this.#client.on('error', () => undefined);
    this.#fd = openSync(path, 'a');
  }

  static async start(env: Pick<Environment, 'schema'>, path: string, intervalMs = 20): Promise<OwnershipSampler> {
    const sampler = new OwnershipSampler(env, path, intervalMs);
    await sampler.#client.connect();
    sampler.#loop = sampler.#run();
    return sampler;
  }

  /** Stops sampling and closes its connection; resolves with every sample taken. */
  async stop(): Promise<OwnershipSample[]> {
    this.#stopped = true;
    await this.#loop;
    await this.#client.end().catch(() => undefined);
    closeSync(this.#fd);
    return this.samples;
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      const t = Date.now();
      try {
        const { rows } = await this.#client.query(this.#sql);
        const sample = toSample(t, rows[0] as OwnershipRow);
        this.samples.push(sample);
        writeSync(this.#fd, `${JSON.stringify(sample)}\n`);
      } catch {
        // a sample lost (the database busy or restarting) widens the gap; the figures report the gaps
      }
      const wait = this.intervalMs - (Date.now() - t);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
