import { z } from 'zod';
import { ConfigurationError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import type { Logger } from '../../core/ports.js';
import type { OutboxOperator } from '../../core/ports/outbox-operator.js';
import type { RelayHealth } from '../../core/relay-health.js';
import { adminTokenCheck, type AdminTokenCheck, adminTokenProblem } from './admin-token.js';
import { DEFAULT_STORE_GATE_LIMITS, type StoreGateLimits } from './store-gate.js';

/**
 * The default port: near Prometheus exporters' range, one above the OpenTelemetry Prometheus exporter's 9464, so
 * that both can run in one process.
 */
export const DEFAULT_OPS_PORT = 9465;

/** A Prometheus registry as the server needs it: an `OutboxerMetrics` from `outboxer/metrics`, or a prom-client `Registry`. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

export interface OpsServerOptions {
  /** The store (its operator role): stats and dead messages, and where it has them gauges, lag per topic, pauses and the relay group. */
  readonly operator: OutboxOperator;
  /** The relay of this process, for `/health/ready` and `/api/stats`. Without one, ready is always 200. */
  readonly relay?: { health(): RelayHealth } | undefined;
  /** Served at `/metrics`; without it `/metrics` is 404. */
  readonly metrics?: MetricsSource | undefined;
  /** Address to listen on. Default `127.0.0.1`; any other than loopback makes reads need the token too. */
  readonly host?: string | undefined;
  /** Default 9465 (`DEFAULT_OPS_PORT`); 0 takes any free port (`listen()` says which). */
  readonly port?: number | undefined;
  /** Bearer token for changes (and for reads beyond loopback); at least 16 visible ASCII characters. Without one, every change is refused. */
  readonly adminToken?: string | undefined;
  /**
   * Default false. True shows a pending message's header values and body in `GET /api/pending/message` (each such
   * read audited) and makes `/api/info` say `payloads: "shown"`; false shows header names and the body's size only.
   */
  readonly exposePayloads?: boolean | undefined;
  /**
   * Default 2: store calls the server makes at once, so at most this many of the store's connections; 16 more may
   * wait up to 5 s for a turn, and beyond that a request is refused at once (503 `OUTBOXER_BUSY`). Give the server a
   * store on a small pool of its own (the daemon does), so that it never takes the relay's connections.
   */
  readonly storeConcurrency?: number | undefined;
  /** Audit lines for changes, failures of the store, and refusals when busy. Default: silent. */
  readonly logger?: Logger | undefined;
}

/** The options resolved once: defaults filled in, validated, frozen; the token kept only as a digest. */
export interface ResolvedOpsServerOptions {
  readonly operator: OutboxOperator;
  readonly relay: { health(): RelayHealth } | undefined;
  readonly metrics: MetricsSource | undefined;
  readonly host: string;
  readonly port: number;
  readonly token: AdminTokenCheck | undefined;
  readonly exposePayloads: boolean;
  /** What the server asks of the store at once, and how many requests wait for a turn (StoreGate). */
  readonly storeLimits: StoreGateLimits;
  readonly logger: Logger;
}

const settingsSchema = z
  .object({
    host: z
      .string()
      .min(1)
      .max(253)
      .regex(/^[A-Za-z0-9.:-]+$/, 'must be an IP address or a host name')
      .default('127.0.0.1'),
    port: z.number().int().min(0).max(65_535).default(DEFAULT_OPS_PORT),
    adminToken: z
      .string()
      .superRefine((token, context) => {
        const problem = adminTokenProblem(token);
        if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
    exposePayloads: z.boolean().default(false),
  })
  .strict();

/** Where the server listens and how it guards itself: the part of the options a CLI takes from flags. */
export type OpsServerSettings = Pick<OpsServerOptions, 'host' | 'port' | 'adminToken' | 'exposePayloads'>;

/** The settings once checked, defaults applied. */
export interface CheckedOpsServerSettings {
  readonly host: string;
  readonly port: number;
  readonly adminToken?: string | undefined;
  readonly exposePayloads: boolean;
}

/** Validates the settings alone (a CLI checks its flags with it before connecting). Throws ConfigurationError naming the option; never quotes the token. */
export function checkOpsServerSettings(settings: OpsServerSettings): CheckedOpsServerSettings {
  const parsed = settingsSchema.safeParse(settings);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue?.path.join('.') ?? '';
  throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `http option ${path || '(root)'}: ${issue?.message ?? 'invalid'}`, {
    options: path === '' ? [] : [path],
  });
}

/** The most store calls a server may make at once (`storeConcurrency`). */
const MAX_STORE_CONCURRENCY = 32;

const OPERATOR_METHODS = ['stats', 'listDead', 'retryDead', 'purgeDead'] as const;

/** Resolves the server's options once: documented defaults, validated, frozen. */
export function resolveOpsServerOptions(options: OpsServerOptions): ResolvedOpsServerOptions {
  const { operator, relay, metrics, logger, storeConcurrency = DEFAULT_STORE_GATE_LIMITS.concurrency, ...settings } = options;
  const missing = OPERATOR_METHODS.filter((name) => typeof operator?.[name] !== 'function');
  if (missing.length > 0) {
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `http option operator: needs a store with ${missing.join(', ')} (a PostgresOutboxStore has them)`, {
      options: ['operator'],
    });
  }
  if (relay !== undefined && typeof relay.health !== 'function') {
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', 'http option relay: needs health() (a Relay has it)', { options: ['relay'] });
  }
  if (metrics !== undefined && (typeof metrics.metrics !== 'function' || typeof metrics.contentType !== 'string')) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      'http option metrics: needs metrics() and contentType (an OutboxerMetrics or a prom-client Registry)',
      { options: ['metrics'] },
    );
  }
  if (!Number.isInteger(storeConcurrency) || storeConcurrency < 1 || storeConcurrency > MAX_STORE_CONCURRENCY) {
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `http option storeConcurrency: must be a whole number from 1 to ${MAX_STORE_CONCURRENCY}`, {
      options: ['storeConcurrency'],
    });
  }
  const { host, port, adminToken, exposePayloads } = checkOpsServerSettings(settings);
  return Object.freeze({
    operator,
    relay,
    metrics,
    host,
    port,
    token: adminToken === undefined ? undefined : adminTokenCheck(adminToken),
    exposePayloads,
    storeLimits: Object.freeze({ ...DEFAULT_STORE_GATE_LIMITS, concurrency: storeConcurrency }),
    logger: logger ?? silentLogger,
  });
}
