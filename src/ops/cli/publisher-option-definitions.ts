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
];
