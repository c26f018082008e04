import { type Message, PubSub } from '@google-cloud/pubsub';
import type { Publisher } from '../../src/core/ports.js';
import { createPubSubPublisher, PubSubAttributeNames } from '../../src/brokers/pubsub/index.js';
import type { BrokerRig } from './broker-rigs.js';
import { emulatorOptions, isolatedTopic, pubsubEmulator } from './pubsub-harness.js';

/**
 * The Pub/Sub emulator as a BrokerRig: one topic and one ordered subscription of the test's own, read by the
 * official client's streaming pull (acknowledging each message at once), and publishers pointed at the emulator
 * directly or through a port of our choosing. Every suffix maps to the one topic: Pub/Sub topics are made ahead.
 */
export async function pubsubRig(): Promise<BrokerRig> {
  const topic = await isolatedTopic();
  const [host, port] = pubsubEmulator.host.split(':');
  const reader = new PubSub({ projectId: pubsubEmulator.projectId, apiEndpoint: pubsubEmulator.host, emulatorMode: true, universeDomain: 'googleapis.com' });
  const subscription = reader.subscription(topic.subscription);
  const deliveries: string[] = [];
  subscription.on('message', (message: Message) => {
    deliveries.push(message.attributes[PubSubAttributeNames.id] ?? '');
    message.ack();
  });
  subscription.on('error', () => undefined); // the subscription is deleted at cleanup while the stream is still open
  const publishers: Publisher[] = [];
  return {
    name: 'Google Cloud Pub/Sub (emulator)',
    brokerPort: Number(port ?? 8085),
    topic: () => topic.topic,
    publisher(viaPort?: number) {
      const apiEndpoint = viaPort === undefined ? pubsubEmulator.host : `${host ?? '127.0.0.1'}:${viaPort}`;
      const publisher = createPubSubPublisher(emulatorOptions({ apiEndpoint, publishTimeoutMs: 3000 }));
      publishers.push(publisher);
      return publisher;
    },
    cliArgs: () => ['--publisher', 'pubsub', '--broker-url', `pubsub://${pubsubEmulator.host}/${pubsubEmulator.projectId}`],
    deliveries,
    async cleanup() {
      await Promise.all(publishers.map((p) => p.close()));
      await subscription.close();
      await reader.close();
      await topic.cleanup();
    },
  };
}
