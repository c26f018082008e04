import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { resolveWebhookPublisherOptions, type WebhookPublisherOptions } from '../../src/brokers/webhook/index.js';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

function refusal(options: unknown): ConfigurationError {
  try {
    resolveWebhookPublisherOptions(options as WebhookPublisherOptions);
  } catch (error) {
    if (error instanceof ConfigurationError) return error;
    throw error;
  }
  throw new Error('expected a ConfigurationError');
}

describe('webhook publisher options', () => {
  it('resolves documented defaults, frozen, with secrets and URLs off the enumerable surface', () => {
    const options = resolveWebhookPublisherOptions({
      url: 'https://relay:pa55word@hooks.example.com/t0ken-path?code=abc',
      secret: SECRET,
      headers: { 'X-Api-Key': 'k-123456' },
    });
    expect(options).toMatchObject({
      publishTimeoutMs: 10_000,
      maxConcurrencyPerEndpoint: 16,
      maxRetryAfterMs: 3_600_000,
      maxMessageBytes: undefined,
      verifyProbe: undefined,
    });
    expect(Object.isFrozen(options)).toBe(true);
    expect(options.defaultEndpoint?.href).toBe('https://hooks.example.com/t0ken-path?code=abc');
    expect(options.defaultEndpoint?.label).toBe('https://hooks.example.com (default url)');
    expect(options.headers).toEqual({ 'x-api-key': 'k-123456' });
    const shown = JSON.stringify(options);
    for (const secret of ['pa55word', 't0ken-path', 'code=abc', 'k-123456', SECRET.slice(6)]) expect(shown).not.toContain(secret);
  });

  it.each([
    [{ secret: SECRET }, 'url', /a default url or at least one route is required/],
    [{ url: 'ftp://hooks.example.com', secret: SECRET }, 'url', /http:\/\/ or https:\/\//],
    [{ url: 'https://hooks.example.com/#x', secret: SECRET }, 'url', /fragment/],
    [
      { url: 'https://hooks.example.com', secret: SECRET, routes: [{ topic: 'orders.>', url: 'https://a.example.com' }] },
      'routes[0].topic',
      /not a topic pattern/,
    ],
    [{ url: 'https://hooks.example.com', secret: SECRET, routes: [{ topic: 'orders.*', url: 'nope' }] }, 'routes[0].url', /not a URL/],
    [{ url: 'https://hooks.example.com', secret: SECRET, headers: { 'Webhook-Signature': 'v1,x' } }, 'headers.Webhook-Signature', /set by the publisher/],
    [{ url: 'https://hooks.example.com', secret: SECRET, headers: { 'x-a': 'line\nbreak' } }, 'headers.x-a', /visible ASCII/],
    [{ url: 'https://u:p@hooks.example.com', secret: SECRET, headers: { Authorization: 'Bearer t' } }, 'headers.Authorization', /conflicts with credentials/],
    [{ url: 'https://hooks.example.com', secret: SECRET, maxConcurrencyPerEndpoint: 0 }, 'maxConcurrencyPerEndpoint', /./],
    [{ url: 'https://hooks.example.com', secret: SECRET, publishTimeoutMs: 1.5 }, 'publishTimeoutMs', /./],
    [{ url: 'https://hooks.example.com', secret: SECRET, verifyProbe: 'POST' }, 'verifyProbe', /./],
    [{ url: 'https://hooks.example.com', secret: SECRET, tiemoutMs: 5 }, '(root)', /tiemoutMs/],
  ])('refuses %j naming the option %s', (options, option, problem) => {
    const error = refusal(options);
    expect(error.code).toBe('OUTBOXER_INVALID_OPTION');
    expect(error.message).toContain(`webhook publisher option ${option}`);
    expect(error.message).toMatch(problem);
  });

  it('refuses a malformed secret without ever printing it', () => {
    const almost = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    for (const [secret, option, problem] of [
      [almost.slice(6), 'secret', /must start with "whsec_"/],
      [`${almost.slice(0, -3)}!!=`, 'secret', /standard base64/],
      [`whsec_${Buffer.alloc(8, 1).toString('base64')}`, 'secret', /24 to 64 bytes/],
      [[SECRET, 'whsec_not base64'], 'secret[1]', /standard base64/],
    ] as const) {
      const error = refusal({ url: 'https://hooks.example.com', secret });
      expect(error.message).toContain(`option ${option}:`);
      expect(error.message).toMatch(problem);
      expect(error.message).not.toContain(almost.slice(6, 20));
      expect(error.message).not.toContain(SECRET.slice(6, 20));
    }
    expect(refusal({ url: 'https://hooks.example.com' }).message).toContain('option secret');
  });
});
