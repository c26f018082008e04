/**
 * A relay in a child process of its own, so that a test can SIGKILL it mid-stream. The parent side is
 * `RelayChild`; the child side is `serveRelay`, called by each database's entry (test/support/dialects/<db>/<db>-relay-child.ts), run with `node --import tsx`. The child reads its
 * configuration from RELAY_CHILD_CONFIG and prints one line per event on stdout: `ready`, then
 * `relay <id> <partitions>` whenever its relay id or partition count changes. Its logs (warnings and up) go to
 * stderr. SIGTERM stops it gracefully.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createJsonLogger } from '../../src/core/logger.js';
import type { Logger, Publisher } from '../../src/core/ports.js';
import { resolveConfig } from '../../src/ops/cli/config.js';
import { cliPublisher } from '../../src/ops/cli/publishers/registry.js';
import { Relay, type StoreForRelay } from '../../src/core/relay.js';
import { createNatsPublisher } from '../../src/brokers/nats/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import type { BrokerRig } from './broker-rigs.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONFIG_VARIABLE = 'RELAY_CHILD_CONFIG';

export type ChildBroker =
  | { readonly kind: 'rabbitmq'; readonly url: string; readonly exchange: string }
  | { readonly kind: 'nats'; readonly servers: string }
  /** Any other publisher, built as `outboxer relay` builds it from these flags (`--publisher redis --broker-url …`). */
  | { readonly kind: 'cli'; readonly args: readonly string[] };

/** Short leases so that a takeover happens within seconds: lease 3 s (beats every 1 s), publish timeout 1 s. */
export const childTiming = {
  leaseMs: 3000,
  publishTimeoutMs: 1000,
  pollIntervalMs: 20,
  maxPollIntervalMs: 100,
  errorBackoffMs: 50,
  maxErrorBackoffMs: 500,
  batchSize: 50,
  retry: { baseDelayMs: 100, maxDelayMs: 500, maxAttempts: 100 },
} as const;

/** The child's script, from the repository root: each database's entry lives in its test dialect's folder. */
export type RelayChildEntry = `test/support/dialects/${string}-relay-child.ts`;

/** Where a relay child finds its outbox. */
export interface ChildOutbox {
  /** A mysql:// URL (mysql entry), a postgres:// URL (postgres entry) or a file path (sqlite entry). */
  readonly database: string;
  /** The postgres entry's schema (default public): each test's outbox lives in a schema of its own. */
  readonly schema?: string;
  readonly table?: string;
}

export interface RelayChildConfig extends ChildOutbox {
  readonly broker: ChildBroker;
  /** Shown in the relay's owner name and in the test's failure messages. */
  readonly name: string;
}

/** Where the child relay publishes to reach `rig`, directly or through a proxy listening on `port`. */
export function childBrokerOf(rig: BrokerRig, port?: number): ChildBroker {
  const args = rig.cliArgs();
  const option = (flag: string) => args[args.indexOf(flag) + 1] ?? '';
  const url = port === undefined ? option('--broker-url') : option('--broker-url').replace(/:\d+$/, `:${port}`);
  switch (option('--publisher')) {
    case 'rabbitmq':
      return { kind: 'rabbitmq', url, exchange: option('--exchange') };
    case 'nats':
      return { kind: 'nats', servers: url };
    default:
      return { kind: 'cli', args: args.map((arg, i) => (args[i - 1] === '--broker-url' ? url : arg)) };
  }
}

/** A publisher built by the CLI's own registry from `--publisher <name> --broker-url <url> --<flag> <value>…`. */
async function cliBrokerPublisher(args: readonly string[], logger: Logger): Promise<Publisher> {
  const values: Record<string, string> = {};
  for (let i = 0; i + 1 < args.length; i += 2) values[(args[i] ?? '').replace(/^--/, '')] = args[i + 1] ?? '';
  const config = resolveConfig('relay', { ...values, 'database-url': 'postgres://127.0.0.1/unused' }, [], {});
  const settings = config.relay;
  if (settings === undefined) throw new Error('no relay settings');
  return cliPublisher(settings.publisher).create(settings.publisherSettings, { logger, publishTimeoutMs: childTiming.publishTimeoutMs });
}

/** The parent's handle on one relay process. */
export class RelayChild {
  readonly #child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #ready: Promise<void>;
  #stderr = '';
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** The relay id it reported last (a relay that lost its lease rejoins under a new one). */
  relayId: string | undefined;
  /** How many partitions it reported holding last. */
  partitions = 0;

  private constructor(
    readonly config: RelayChildConfig,
    entry: RelayChildEntry,
  ) {
    this.#child = spawn(process.execPath, ['--import', 'tsx', entry], {
      cwd: ROOT,
      env: { ...process.env, [CONFIG_VARIABLE]: JSON.stringify(config) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.exited = new Promise((resolve) => this.#child.once('exit', (code, signal) => resolve((this.#exit = { code, signal }))));
    this.#child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.#stderr += chunk));
    this.#ready = new Promise((resolve, reject) => {
      this.#child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        for (const line of chunk.split('\n')) {
          const [word, id, partitions] = line.trim().split(' ');
          if (word === 'ready') resolve();
          if (word === 'relay' && id !== undefined) {
            this.relayId = id;
            this.partitions = Number(partitions);
          }
        }
      });
      void this.exited.then((exit) =>
        reject(new Error(`relay child ${config.name} exited (${exit.signal ?? exit.code}) before it was ready: ${this.#stderr.slice(-2000)}`)),
      );
    });
    this.#ready.catch(() => undefined);
  }

  static start(entry: RelayChildEntry, config: RelayChildConfig): RelayChild {
    return new RelayChild(config, entry);
  }

  get running(): boolean {
    return this.#exit === undefined;
  }

  /** What it wrote on stderr (its logs), for assertions on what it saw and for failure messages. */
  get logs(): string {
    return this.#stderr;
  }

  /** Resolves once the relay runs (its start checks passed); rejects if the process ended first. */
  ready(timeoutMs = 30_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`relay child ${this.config.name} not ready after ${timeoutMs} ms: ${this.#stderr.slice(-2000)}`)), timeoutMs);
    });
    return Promise.race([this.#ready, late]).finally(() => clearTimeout(timer));
  }

  /** SIGKILL: nothing is given back; its partitions wait for the lease to run out. */
  async kill(): Promise<void> {
    if (this.running) this.#child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM (a graceful stop), then SIGKILL if it has not ended after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    this.#child.kill('SIGTERM');
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), graceMs);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The relay children a test starts, stopped after it. */
export function relayChildren(entry: RelayChildEntry): { start(config: RelayChildConfig): RelayChild; stopAll(): Promise<void> } {
  const started: RelayChild[] = [];
  return {
    start(config) {
      const child = RelayChild.start(entry, config);
      started.push(child);
      return child;
    },
    async stopAll() {
      await Promise.all(started.splice(0).map((child) => child.stop()));
    },
  };
}

/** The child's configuration, as the parent put it in the environment. */
export function readChildConfig(): RelayChildConfig {
  const text = process.env[CONFIG_VARIABLE];
  if (text === undefined) throw new Error(`${CONFIG_VARIABLE} is not set: this file is started by RelayChild`);
  return JSON.parse(text) as RelayChildConfig;
}

/**
 * The child side: runs a relay over `store` until SIGTERM, reporting on stdout as described above. `close`
 * releases the store's connections once the relay stopped.
 */
export async function serveRelay(store: StoreForRelay, config: RelayChildConfig, close: () => Promise<void>): Promise<void> {
  const fail = (what: string) => (error: unknown) => {
    process.stderr.write(`relay child ${config.name}: ${what}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(70);
  };
  process.on('uncaughtException', fail('uncaught exception'));
  process.on('unhandledRejection', fail('unhandled rejection'));
  const logger = createJsonLogger('warn');
  const { broker } = config;
  const publisher: Publisher =
    broker.kind === 'rabbitmq'
      ? createRabbitMqPublisher({
          url: broker.url,
          exchange: broker.exchange,
          confirmTimeoutMs: childTiming.publishTimeoutMs,
          connectTimeoutMs: 2000,
          heartbeatSeconds: 2,
          logger,
        })
      : broker.kind === 'nats'
        ? createNatsPublisher({ servers: broker.servers, publishTimeoutMs: childTiming.publishTimeoutMs, connectTimeoutMs: 2000, logger })
        : await cliBrokerPublisher(broker.args, logger);
  const relay = new Relay(store, publisher, {
    ...childTiming,
    owner: `${config.name}/${process.pid}`,
    logger,
    hooks: {
      onError: (event) => logger.warn({ ...event }, 'relay hook: error'),
      onRetry: (event) => logger.warn({ ...event }, 'relay hook: retry'),
    },
  });
  await relay.verify();
  relay.start();
  process.stdout.write('ready\n');
  let reported = '';
  const report = setInterval(() => {
    const { relayId, partitions } = relay;
    const line = `relay ${relayId ?? '-'} ${partitions.length}`;
    if (relayId !== undefined && line !== reported) process.stdout.write(`${(reported = line)}\n`);
  }, 50);
  process.once('SIGTERM', () => {
    clearInterval(report);
    void (async () => {
      await relay.stop();
      await publisher.close();
      await close();
      process.exit(0);
    })().catch(fail('stop'));
  });
}
