import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, startScript } from '../support/cli-runner.js';
import { freshDatabase } from '../support/fresh-services.js';
import { isolatedTopic, pubsubEmulator } from '../support/pubsub-harness.js';

/**
 * examples/publishers/pubsub.ts is the code block of docs/publishers/pubsub.md (test/unit/doc-snippets.test.ts):
 * here it runs as a user runs it, on a database of its own and a project of its own in the emulator, so it keeps
 * the page's topic prefix.
 */
describe('the example of docs/publishers/pubsub.md', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('publishes through the relay to the prefixed topic, with the key as ordering key, and the program ends', async () => {
    const db = await freshDatabase();
    cleanups.push(() => db.drop());
    const projectId = `ex-${Math.random().toString(36).slice(2, 12)}`;
    const topic = await isolatedTopic('outbox-orders.created', projectId);
    cleanups.push(() => topic.cleanup());
    const env = cliEnv({ DATABASE_URL: db.url, PUBSUB_PROJECT_ID: projectId, PUBSUB_API_ENDPOINT: pubsubEmulator.host });
    const exit = await startScript('examples/publishers/pubsub.ts', [], env).waitForExit(60_000);
    expect({ code: exit.code, stderr: exit.stderr }).toEqual({ code: 0, stderr: '' });
    const [message] = await topic.waitForPulled(1);
    expect(JSON.parse(Buffer.from(message?.data ?? '', 'base64').toString('utf8'))).toEqual({ id: 1 });
    expect(message?.orderingKey).toBe('order-1');
    expect(message?.attributes).toMatchObject({ 'outbox-type': 'order.created', 'outbox-key': 'order-1', 'content-type': 'application/json' });
  });
});
