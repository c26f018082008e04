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
    summary: 'prefix of the broker topic: MQTT `<prefix>/<topic with . as />`', defaultText: 'none',
    details: 'MQTT: `orders.created` goes to `<prefix>/orders/created` (docs/publishers/mqtt.md).',
  },
  {
    flag: 'client-id', env: 'OUTBOXER_CLIENT_ID', section: 'relay', commands: RELAY, kind: 'text', placeholder: '<id>',
    summary: 'MQTT client identifier; each relay needs its own', defaultText: '`outboxer` + random hex',
    details: 'Two connections with one client id take each other\'s session: leave it unset when several relays run.',
  },
];
