/**
 * The flags that only some publishers read (the registry in publishers/ says which), in the relay section of
 * the option table; option-definitions.ts places them after `--broker-url`.
 */
import type { OptionDefinition } from './option-definitions.js';

const RELAY = ['relay'] as const;

export const PUBLISHER_OPTION_DEFINITIONS: readonly OptionDefinition[] = [
  {
    flag: 'exchange', env: 'OUTBOXER_EXCHANGE', section: 'relay', commands: RELAY, kind: 'text', placeholder: '<name>',
    summary: 'RabbitMQ exchange (durable topic, declared if missing)', defaultText: 'outbox',
    details: 'The routing key is the message topic. RabbitMQ only.',
  },
  {
    flag: 'subject-prefix', env: 'OUTBOXER_SUBJECT_PREFIX', section: 'relay', commands: RELAY, kind: 'text', placeholder: '<prefix>',
    summary: 'NATS subject = `<prefix>.<topic>`', defaultText: 'none',
    details: 'Without a prefix the subject is the topic. NATS only. A JetStream stream must capture the subjects.',
  },
  {
    flag: 'webhook-secret', env: 'OUTBOXER_WEBHOOK_SECRET', section: 'relay', commands: RELAY, kind: 'text', placeholder: '<whsec_…>',
    summary: 'webhook signing secret; several, comma-separated, during a rotation', defaultText: 'required for webhook',
    details: 'Each request carries one `v1,` signature per secret (docs/publishers/webhook.md). Never logged; prefer the variable, as flags show in `ps`. Routes per topic are set in code.',
  },
  {
    flag: 'webhook-max-concurrency', env: 'OUTBOXER_WEBHOOK_MAX_CONCURRENCY', section: 'relay', commands: RELAY, kind: 'integer', placeholder: '<n>', min: 1, max: 10_000,
    summary: 'requests in flight to one origin (scheme, host, port) at most', defaultText: '16',
  },
  {
    flag: 'topic-prefix', env: 'OUTBOXER_TOPIC_PREFIX', section: 'relay', commands: RELAY, kind: 'text', placeholder: '<prefix>',
    summary: 'prefix of the broker topic: MQTT `<prefix>/<topic with . as />`, Pub/Sub `<prefix><topic>`', defaultText: 'none',
    details: 'MQTT: `orders.created` goes to `<prefix>/orders/created` (docs/publishers/mqtt.md). Pub/Sub: the topic id is the prefix followed by the topic (docs/publishers/pubsub.md).',
  },
  {
    flag: 'client-id', env: 'OUTBOXER_CLIENT_ID', section: 'relay', commands: RELAY, kind: 'text', placeholder: '<id>',
    summary: 'MQTT client identifier; each relay needs its own', defaultText: '`outboxer` + random hex',
    details: 'Two connections with one client id take each other\'s session: leave it unset when several relays run.',
  },
  {
    flag: 'aws-region', env: 'OUTBOXER_AWS_REGION', section: 'relay', commands: RELAY, kind: 'text', placeholder: '<region>',
    summary: 'AWS region of the SQS queue or SNS topic', defaultText: "the SDK's chain: `AWS_REGION` or the shared config",
    details: 'Credentials always come from the SDK\'s default chain (environment, shared files, instance or task role).',
  },
  {
    flag: 'aws-endpoint', env: 'OUTBOXER_AWS_ENDPOINT', section: 'relay', commands: RELAY, kind: 'text', placeholder: '<url>',
    summary: 'endpoint URL for an emulator or a VPC endpoint', defaultText: "AWS's endpoint of the region",
  },
  {
    flag: 'stream-prefix', env: 'OUTBOXER_STREAM_PREFIX', section: 'relay', commands: RELAY, kind: 'text', placeholder: '<prefix>',
    summary: 'Redis stream = `<prefix><topic>`', defaultText: 'none',
    details: 'Put directly in front of the topic: `events:` gives the stream `events:orders.created`.',
  },
  {
    flag: 'max-len', env: 'OUTBOXER_MAX_LEN', section: 'relay', commands: RELAY, kind: 'integer', placeholder: '<n>', min: 1, max: 1_000_000_000_000,
    summary: 'trim each Redis stream to about this many entries (`XADD … MAXLEN ~ n`)', defaultText: 'no trimming',
    details: 'Approximate trimming may drop entries no consumer has read yet: size it above your consumers\' lag (docs/publishers/redis.md).',
  },
  {
    flag: 'address', env: 'OUTBOXER_ADDRESS', section: 'relay', commands: RELAY, kind: 'text', placeholder: '<template>',
    summary: 'AMQP 1.0 target address, with `{topic}` once', defaultText: '`{topic}`',
    details: 'RabbitMQ\'s plugin: `/exchange/<exchange>/{topic}` (docs/publishers/amqp10.md); Service Bus and Artemis: the queue or topic name.',
  },
];
