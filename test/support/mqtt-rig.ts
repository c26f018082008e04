import type { Publisher } from '../../src/core/ports.js';
import { createMqttPublisher } from '../../src/brokers/mqtt/index.js';
import type { BrokerRig } from './broker-rigs.js';
import { MQTT_URL, recordTopics } from './mqtt-harness.js';
import { uniqueName } from './services.js';

/**
 * The shared Mosquitto as a BrokerRig: every publisher of the rig (and the relay process of `cliArgs()`) publishes
 * under a topic prefix of its own, which a QoS 1 subscriber, subscribed before anything is published, records.
 */
export async function mqttRig(): Promise<BrokerRig> {
  const topicPrefix = uniqueName('rig');
  const recorder = await recordTopics(`${topicPrefix}/#`, { topicPrefix });
  const deliveries: string[] = [];
  recorder.client.on('message', (_topic, _payload, packet) => {
    const id = packet.properties?.userProperties?.['outbox-id'];
    deliveries.push(Array.isArray(id) ? (id[0] ?? '') : (id ?? ''));
  });
  const publishers: Publisher[] = [];
  const brokerPort = Number(new URL(MQTT_URL).port || 1883);
  return {
    name: 'MQTT',
    brokerPort,
    topic: (suffix) => `orders.${suffix}`,
    publisher(port = brokerPort) {
      const publisher = createMqttPublisher({
        url: `mqtt://127.0.0.1:${port}`,
        topicPrefix,
        publishTimeoutMs: 3000,
        connectTimeoutMs: 2000,
        maxMessageBytes: 1024 * 1024,
      });
      publishers.push(publisher);
      return publisher;
    },
    cliArgs: () => ['--publisher', 'mqtt', '--broker-url', MQTT_URL, '--topic-prefix', topicPrefix],
    deliveries,
    async cleanup() {
      await Promise.all(publishers.map((p) => p.close()));
      await recorder.close();
    },
  };
}
