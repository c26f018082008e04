import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, startScript } from '../support/cli-runner.js';
import { freshDatabase } from '../support/fresh-services.js';
import { PrivateMosquitto, recordTopics } from '../support/mqtt-harness.js';

describe('the example of docs/publishers/mqtt.md', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('publishes through the relay to events/orders/created, its subscriber reads id, type, key, content type and body, and the program ends', async () => {
    const db = await freshDatabase();
    cleanups.push(() => db.drop());
    const broker = await PrivateMosquitto.create();
    cleanups.push(() => broker.destroy());
    await broker.start();
    const watcher = await recordTopics('#', { url: broker.url });
    cleanups.push(() => watcher.close());

    const exit = await startScript('examples/publishers/mqtt.ts', [], cliEnv({ DATABASE_URL: db.url, MQTT_URL: broker.url })).waitForExit(60_000);
    expect({ code: exit.code, stderr: exit.stderr }).toEqual({ code: 0, stderr: '' });
    const printed = JSON.parse(exit.stdout.trim()) as Record<string, unknown>;
    expect(printed).toMatchObject({ type: 'order.created', key: 'order-1', topic: 'events/orders/created', contentType: 'application/json', data: { id: 1 } });
    expect(printed.id).toMatch(/^[0-9a-f-]{36}$/);
    // a second subscriber saw the same single message: one publish, nothing retained
    const [seen] = await watcher.waitFor(1);
    expect([seen?.mqttTopic, seen?.id, seen?.retain]).toEqual(['events/orders/created', printed.id, false]);
  });
});
