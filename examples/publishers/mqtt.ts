/**
 * The code of docs/publishers/mqtt.md in a program that runs: a subscriber with a persistent session, one
 * message through the relay, the subscriber prints what it read, then everything shuts down.
 */
import { logger, outbox, relayOneMessage } from './example-outbox.js';

// #region docs/publishers/mqtt.md
import { createMqttPublisher } from 'outboxer/mqtt';

const publisher = createMqttPublisher({
  url: process.env.MQTT_URL!,         // mqtt://user:password@host:1883, mqtts://, ws://host/mqtt or wss://
  topicPrefix: 'events',              // optional: orders.created is published to events/orders/created
  logger,                             // optional, pino-compatible
});
const relay = outbox.createRelay(publisher);
// #endregion

// #region docs/publishers/mqtt.md
import { connectAsync } from 'mqtt';

const subscriber = await connectAsync(process.env.MQTT_URL!, {
  protocolVersion: 5,
  clientId: 'billing',                              // the session is found again by its client id
  clean: false,                                     // resume the session: what came while away is delivered
  properties: { sessionExpiryInterval: 7 * 86_400 }, // the broker keeps the session a week after a disconnect
});
const handled = new Set<string>();                  // in production: your inbox table, in the handler's transaction
subscriber.on('message', (topic, payload, packet) => {
  const property = (name: string) => [packet.properties?.userProperties?.[name] ?? []].flat()[0];
  const id = property('outbox-id')!;
  if (handled.has(id)) return;                      // QoS 1 is at least once: a copy carries the same outbox-id
  handled.add(id);
  const event = { id, type: property('outbox-type'), key: property('outbox-key'), topic };
  console.log(JSON.stringify({ ...event, contentType: packet.properties?.contentType, data: JSON.parse(payload.toString('utf8')) as unknown }));
});
await subscriber.subscribeAsync('events/orders/#', { qos: 1 });
// #endregion

await relayOneMessage(relay);
while (handled.size === 0) await new Promise((resolve) => setTimeout(resolve, 20));
await subscriber.endAsync();
