import type pg from 'pg';
import { type ConsumerSide, CONSUMER_POOL_SIZE, type DrainProbe, effectsTableSql, INBOX_CONSUMER_NAME, startConsumer } from '../contenders/inbox-consumers.js';
import type { PostgresCpu, PostgresCpuMeter } from '../measure/process-cpu.js';
import type { BrokerKind } from './broker-target.js';
import { createConsumerSource } from './consumer-source.js';
import { benchPool, uniqueName } from './database.js';

/** One contender draining its own preloaded copy of the backlog. */
export interface ConsumerDrain {
  /** First delivery to last ack. */
  readonly seconds: number;
  readonly preloaded: number;
  readonly acked: number;
  readonly effects: number;
  /** Processed inbox rows of the consumer; null for the minimal consumer, which has no inbox. */
  readonly inboxRows: number | null;
  /** What the broker still holds for the drain after the consumer stopped (unacknowledged or never delivered). */
  readonly left: number;
  /** The bench process (the consumer, its broker client and pg driver), µs over first delivery to last ack. */
  readonly consumerCpu: number;
  readonly postgres: PostgresCpu | null;
  readonly error: string | null;
}

/**
 * Times a drain from the first delivery to the `n`-th ack; CPU counters are read at both ends. At the first
 * delivery the /proc read of PostgreSQL's processes comes before the bench's own counter, so it is not counted in it.
 */
class DrainClock implements DrainProbe {
  readonly done: Promise<void>;
  acks = 0;
  began = Number.NaN;
  ended = Number.NaN;
  #cpuBefore: NodeJS.CpuUsage | undefined;
  cpu = Number.NaN;
  error: unknown;
  #resolve!: () => void;

  constructor(
    private readonly n: number,
    private readonly meter: PostgresCpuMeter | null,
  ) {
    this.done = new Promise<void>((resolve) => {
      this.#resolve = resolve;
    });
  }

  delivered(): void {
    if (this.#cpuBefore !== undefined) return;
    this.meter?.start();
    this.#cpuBefore = process.cpuUsage();
    this.began = performance.now();
  }

  acked(): void {
    if (++this.acks !== this.n) return;
    this.ended = performance.now();
    const used = process.cpuUsage(this.#cpuBefore);
    this.cpu = used.user + used.system;
    this.#resolve();
  }

  failed(error: unknown): void {
    this.error ??= error;
    this.#resolve();
  }
}

async function count(admin: pg.Client, sql: string): Promise<number> {
  return (await admin.query<{ n: number }>(sql)).rows[0]?.n ?? -1;
}

/**
 * A fresh schema (the effects table; for outboxer its inbox too), a fresh queue or stream preloaded with `n`
 * messages by outboxer's publisher, then the contender started on them and timed until it acked all `n`.
 * Everything is dropped afterwards.
 */
export async function drainConsumer(
  admin: pg.Client,
  meter: PostgresCpuMeter | null,
  broker: BrokerKind,
  side: ConsumerSide,
  n: number,
  workload: { keys: number; payloadBytes: number },
): Promise<ConsumerDrain> {
  const schema = uniqueName(`bench_${side}`);
  const durable = uniqueName(`bench_${side}`);
  const source = await createConsumerSource(broker);
  const pool = benchPool(`bench-${side}-consumer`, CONSUMER_POOL_SIZE);
  try {
    await admin.query(`CREATE SCHEMA "${schema}"`);
    await admin.query(effectsTableSql(schema));
    await source.preload(n, workload);
    const preloaded = await source.held();
    const clock = new DrainClock(n, meter);
    const consumer = await startConsumer(side, { source, pool, schema, durable, effects: `"${schema}".effects`, probe: clock });
    let postgres: PostgresCpu | null = null;
    try {
      const limitMs = Math.max(60_000, n * 10);
      await Promise.race([clock.done, new Promise((resolve) => setTimeout(resolve, limitMs, undefined).unref())]);
      postgres = meter === null || !Number.isFinite(clock.ended) ? null : await meter.stop(process.pid);
    } finally {
      await consumer.stop();
    }
    const inboxRows =
      side === 'outboxer'
        ? await count(admin, `SELECT count(*)::int AS n FROM "${schema}".outbox_inbox WHERE consumer = '${INBOX_CONSUMER_NAME}' AND state = 'processed'`)
        : null;
    const failure = clock.error ?? (Number.isFinite(clock.ended) ? undefined : new Error(`timed out with ${clock.acks}/${n} acked`));
    return {
      seconds: (clock.ended - clock.began) / 1000,
      preloaded,
      acked: clock.acks,
      effects: await count(admin, `SELECT count(*)::int AS n FROM "${schema}".effects`),
      inboxRows,
      left: await source.held(broker === 'nats' ? durable : undefined),
      consumerCpu: clock.cpu,
      postgres,
      error: failure === undefined ? null : failure instanceof Error ? failure.message : String(failure),
    };
  } finally {
    await pool.end().catch(() => undefined);
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await source.cleanup().catch(() => undefined);
  }
}
