import { afterAll, afterEach, beforeAll } from 'vitest';
import type { NatsPublisherOptions } from '../../src/brokers/nats/index.js';
import { addStream, natsAdmin, publisherPool, type NatsAdmin } from './nats-harness.js';
import { services, uniqueName } from './services.js';

/**
 * Per-describe fixtures for the NATS publisher tests. Call inside a describe: it registers the hooks that
 * open the admin connection, and close every publisher and delete every stream a test made.
 */
export function natsPublisherFixtures() {
  let opened: NatsAdmin | undefined;
  const connection = (): NatsAdmin => {
    if (opened === undefined) throw new Error('the NATS admin connection opens in beforeAll');
    return opened;
  };
  /** The shared admin connection, usable from beforeAll on. */
  const admin: NatsAdmin = {
    get nc() {
      return connection().nc;
    },
    get jsm() {
      return connection().jsm;
    },
    close: () => connection().close(),
  };
  const pool = publisherPool();
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    opened = await natsAdmin();
  });
  afterEach(async () => {
    await pool.closeAll();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    await admin.close();
  });

  /** A stream of the test's own, capturing `<prefix>.>`; deleted after the test. */
  async function isolatedStream(config: Parameters<typeof addStream>[2] = {}): Promise<{ prefix: string; stream: string }> {
    const prefix = uniqueName('p');
    const stream = await addStream(admin, prefix, config);
    cleanups.push(() => admin.jsm.streams.delete(stream).then(() => undefined));
    return { prefix, stream };
  }

  /** A publisher to the shared local NATS server, closed after the test. */
  const local = (extra: Partial<NatsPublisherOptions> = {}) => pool.make({ servers: services.natsUrl, publishTimeoutMs: 5000, ...extra });

  return { admin, pool, cleanups, isolatedStream, local };
}
