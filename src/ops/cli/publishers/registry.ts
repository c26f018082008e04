import { amqp10Publisher } from './amqp10.js';
import { snsPublisher, sqsPublisher } from './aws.js';
import type { CliPublisher } from './cli-publisher.js';
import { consolePublisher } from './console.js';
import { mqttPublisher } from './mqtt.js';
import { natsPublisher } from './nats.js';
import { pubSubPublisher } from './pubsub.js';
import { rabbitMqPublisher } from './rabbitmq.js';
import { redisPublisher } from './redis.js';
import { webhookPublisher } from './webhook.js';

/** Every publisher `outboxer relay --publisher <name>` runs, in the order the help lists them. */
export const CLI_PUBLISHERS: readonly CliPublisher[] = Object.freeze([
  consolePublisher,
  rabbitMqPublisher,
  natsPublisher,
  redisPublisher,
  mqttPublisher,
  webhookPublisher,
  pubSubPublisher,
  sqsPublisher,
  snsPublisher,
  amqp10Publisher,
]);

export const PUBLISHER_NAMES: readonly string[] = Object.freeze(CLI_PUBLISHERS.map((entry) => entry.name));

/** The entry of a name `--publisher` accepted. */
export function cliPublisher(name: string): CliPublisher {
  const entry = CLI_PUBLISHERS.find((candidate) => candidate.name === name);
  if (entry === undefined) throw new Error(`no publisher named ${name}`);
  return entry;
}

/** The publishers that read `flag` (for the message that refuses it with another one). */
export function publishersReading(flag: string): readonly string[] {
  return CLI_PUBLISHERS.filter((entry) => (flag === 'broker-url' ? entry.brokerUrl !== undefined : entry.flags.includes(flag))).map((entry) => entry.name);
}
