import { afterEach } from 'vitest';
import type { Publisher } from '../../src/core/ports.js';
import { createRabbitMqPublisher, type RabbitMqPublisherOptions } from '../../src/brokers/rabbitmq/index.js';
import { isolatedExchange } from './rabbitmq-harness.js';
import { uniqueName } from './services.js';

/**
 * Per-file fixtures for the RabbitMQ publisher tests. Call once at the top of a test file: it registers the
 * afterEach that closes everything a test opened, even when the test fails.
 */
export function rabbitMqPublisherFixtures() {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });
  function track<T extends { close(): Promise<unknown> } | { cleanup(): Promise<unknown> }>(resource: T): T {
    cleanups.push(() => ('cleanup' in resource ? resource.cleanup() : resource.close()));
    return resource;
  }
  /** An exchange of the test's own with a consumed queue bound to it; deleted after the test. */
  async function exchangeFixture() {
    return track(await isolatedExchange());
  }
  function publisherFor(options: RabbitMqPublisherOptions): Publisher {
    return track(createRabbitMqPublisher({ clientName: uniqueName('ox_rmq'), ...options }));
  }
  return { cleanups, track, exchangeFixture, publisherFor };
}
