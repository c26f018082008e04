import { CliFailure } from '../errors.js';
import { definePublisher, loadPublisherModule, singleUrl, textFlag } from './cli-publisher.js';

export const webhookPublisher = definePublisher({
  name: 'webhook',
  summary: 'an HTTP POST per message, signed as Standard Webhooks say',
  brokerUrl: { protocols: ['http:', 'https:'] },
  flags: ['webhook-secret', 'webhook-max-concurrency'],
  secretFlags: ['webhook-secret'],
  async create(settings, { logger, publishTimeoutMs }) {
    const { createWebhookPublisher } = await loadPublisherModule(this, () => import('../../../brokers/webhook/index.js'));
    const secrets = (textFlag(settings, 'webhook-secret') ?? '')
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part !== '');
    if (secrets.length === 0)
      throw new CliFailure(
        'OUTBOXER_INVALID_OPTION',
        '--publisher webhook needs --webhook-secret or OUTBOXER_WEBHOOK_SECRET (whsec_…; several, comma-separated, during a rotation)',
      );
    const concurrency = settings.flags['webhook-max-concurrency'];
    return createWebhookPublisher({
      url: singleUrl(settings, this.name),
      secret: secrets,
      publishTimeoutMs,
      ...(typeof concurrency === 'number' ? { maxConcurrencyPerEndpoint: concurrency } : {}),
      logger,
    });
  },
});
