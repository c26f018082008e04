import type { DestinationInput } from '../../../core/destinations.js';
import { describeError, PublishError } from '../../../core/errors.js';
import { createJsonLogger } from '../../../core/logger.js';
import type { Logger, Publisher } from '../../../core/ports.js';
import { redactUrl } from '../../../core/redact.js';
import { Relay } from '../../../core/relay.js';
import { resolveRelayOptions } from '../../../core/relay-options.js';
import type { CliConfig } from '../config.js';
import type { OpenedStore } from '../../../core/ports/store-dialect.js';
import { openStore, targetOf } from '../database.js';
import { CliFailure, describeFailure, EXIT_OK, EXIT_USAGE, TargetedFailure } from '../errors.js';
import { loadPublisherTracer, type PublisherTracer } from '../publisher-tracer.js';
import type { CliIo } from '../io.js';
import { type DaemonOpsServer, loadDaemonMetrics, startDaemonOpsServer } from '../ops-http.js';
import { createPublisher, loggedPublisherFlags } from '../publisher.js';
import type { DestinationSettings } from '../relay-destinations.js';
import { type StopSignal, watchStopSignals } from '../signals.js';

const STOPPED = Symbol('stopped');

/** A startup step that a stop signal may overtake (a broker that never answers the handshake). */
function untilStopped<T>(step: Promise<T>, stop: StopSignal): Promise<T | typeof STOPPED> {
  return Promise.race([step, stop.requested.then((): typeof STOPPED => STOPPED)]);
}

async function closeQuietly(what: string, close: () => Promise<void>, logger: Logger): Promise<void> {
  try {
    await close();
  } catch (error) {
    logger.warn({ error: describeError(error) }, `closing the ${what} failed`);
  }
}

/**
 * `outboxer relay`: store + publisher + Relay until SIGTERM/SIGINT, then a graceful stop (the in-flight
 * batch confirmed or released), publisher and pool closed, exit 0. Outages of the database or the broker
 * are the relay's to ride out: it backs off and retries; nothing here ends the process for them. A
 * misconfiguration found by the start checks (`relay.verify()`) exits 2 with one line that says what to fix.
 * With `--http-port`, the HTTP server of operations listens once the checks passed (a port it cannot take exits
 * 1 before the relay starts) and closes after the relay stopped. With `--tracing`, outboxer/otel is loaded first
 * (exit 2 if `@opentelemetry/api` is missing) and wraps the publisher.
 */
export async function relayCommand(config: CliConfig, io: CliIo, version: string): Promise<number> {
  const settings = config.relay;
  if (settings === undefined || config.databaseUrl === undefined) throw new CliFailure('OUTBOXER_INVALID_OPTION', 'relay settings missing');
  const logger = createJsonLogger(config.logLevel, io.err);
  const input = settings.options;
  const { owner, publishTimeoutMs } = resolveRelayOptions(input);
  const broker = { what: 'broker', urls: settings.brokerUrls };
  let tracer: PublisherTracer | undefined;
  try {
    tracer = settings.tracing ? await loadPublisherTracer() : undefined;
  } catch (error) {
    if (!(error instanceof CliFailure)) throw error;
    io.err(`${describeFailure('relay', error)}\n`);
    return EXIT_USAGE;
  }
  const stop = watchStopSignals(io, logger);
  let opened: OpenedStore | undefined;
  let publisher: Publisher | undefined;
  const destinations: Record<string, DestinationInput> = {};
  let ops: DaemonOpsServer | undefined;
  try {
    opened = await openStore(config, logger, { max: 4, ...settings.store });
    if (settings.migrate) {
      const applied = await untilStopped(opened.migrate(), stop);
      if (applied === STOPPED) return EXIT_OK;
      logger.info({ schema: config.schema, table: config.table, applied }, applied.length > 0 ? 'migrations applied' : 'schema up to date');
    }
    const created = await untilStopped(
      createPublisher(settings, logger, publishTimeoutMs).catch((error: unknown) => {
        throw new TargetedFailure(error, broker);
      }),
      stop,
    );
    if (created === STOPPED) return EXIT_OK;
    publisher = tracer === undefined ? created : tracer.wrap(created);
    for (const destination of settings.destinations) {
      const made = await untilStopped(
        createPublisher(destination, logger, publishTimeoutMs).catch((error: unknown) => {
          throw new TargetedFailure(error, { what: `broker of destination ${destination.name}`, urls: destination.brokerUrls });
        }),
        stop,
      );
      if (made === STOPPED) return EXIT_OK;
      destinations[destination.name] = { publisher: tracer === undefined ? made : tracer.wrap(made), envelope: destination.envelope };
    }
    const metrics = settings.http === undefined ? undefined : await loadDaemonMetrics(logger);
    const hooks = metrics === undefined ? {} : { hooks: metrics.relayHooks() };
    const wake = opened.wakeSignal === undefined ? {} : { wakeSignal: opened.wakeSignal };
    const relay = new Relay(opened.store, publisher, { ...input, owner, logger, ...wake, ...hooks, destinations });
    try {
      if ((await untilStopped(relay.verify(), stop)) === STOPPED) return EXIT_OK;
    } catch (error) {
      const database = { what: 'database', urls: [config.databaseUrl] };
      io.err(`${describeFailure('relay', error, error instanceof PublishError ? broker : database)}\n`);
      return EXIT_USAGE;
    }
    if (settings.http !== undefined) ops = await startDaemonOpsServer(settings.http, { config, opened, relay, metrics, logger });
    const { logger: _logger, hooks: _hooks, wakeSignal: _wakeSignal, destinations: _destinations, ...effective } = relay.options;
    logger.info(
      {
        version,
        publisher: settings.publisher,
        database: redactUrl(config.databaseUrl),
        ...(settings.brokerUrls.length === 0 ? {} : { broker: settings.brokerUrls.map(redactUrl).join(',') }),
        ...loggedPublisherFlags(settings),
        ...(settings.destinations.length === 0 ? {} : { destinations: loggedDestinations(settings.destinations) }),
        ...(settings.tracing ? { tracing: true } : {}),
        table: config.table,
        retainPublishedMs: opened.store.retainPublishedMs,
        idempotencyWindowMs: opened.store.idempotencyWindowMs,
        dialect: opened.dialect.name,
        ...opened.dialect.startLogFields(targetOf(config), settings.store),
        ...(ops === undefined ? {} : { http: ops.url }),
        ...effective,
      },
      'outboxer relay starting',
    );
    relay.start();
    await stop.requested;
    await relay.stop();
    return EXIT_OK;
  } finally {
    // After the relay stopped: /health/ready answers until the graceful stop is over.
    if (ops !== undefined) await closeQuietly('http server', () => ops?.close() ?? Promise.resolve(), logger);
    if (publisher !== undefined) await closeQuietly('publisher', publisher.close.bind(publisher), logger);
    for (const [name, { publisher: made }] of Object.entries(destinations))
      await closeQuietly(`publisher of destination ${name}`, made.close.bind(made), logger);
    if (tracer !== undefined) await closeQuietly('tracing (flushing its spans)', () => tracer?.flush() ?? Promise.resolve(), logger);
    if (opened !== undefined) await closeQuietly('database pool', () => opened?.store.close() ?? Promise.resolve(), logger);
    logger.info({ owner }, 'outboxer relay exited');
    stop.dispose();
  }
}

/** The destinations for the start log: publisher, redacted URLs, flags that are not secret, envelope. */
function loggedDestinations(destinations: readonly DestinationSettings[]): Record<string, unknown> {
  return Object.fromEntries(
    destinations.map((d) => [
      d.name,
      {
        publisher: d.publisher,
        ...(d.brokerUrls.length === 0 ? {} : { broker: d.brokerUrls.map(redactUrl).join(',') }),
        ...loggedPublisherFlags(d),
        envelope: d.envelope,
      },
    ]),
  );
}
