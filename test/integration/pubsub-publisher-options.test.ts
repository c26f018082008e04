import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { createPubSubPublisher, pubSubOptionsFromUrl, resolvePubSubPublisherOptions } from '../../src/brokers/pubsub/index.js';

describe('Pub/Sub publisher options', () => {
  const refused = (options: object): ConfigurationError => {
    try {
      resolvePubSubPublisherOptions(options as never);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigurationError);
      return error as ConfigurationError;
    }
    throw new Error(`accepted ${JSON.stringify(options)}`);
  };

  it('resolves documented defaults, frozen', () => {
    const options = resolvePubSubPublisherOptions({ projectId: 'my-project' });
    expect(options).toEqual({
      projectId: 'my-project',
      topicPrefix: '',
      apiEndpoint: undefined,
      emulator: false,
      publishTimeoutMs: 10_000,
      ordering: true,
      batching: { maxMessages: 100, maxMilliseconds: 5 },
      logger: expect.any(Object),
    });
    expect(Object.isFrozen(options)).toBe(true);
    expect(Object.isFrozen(options.batching)).toBe(true);
    expect(resolvePubSubPublisherOptions({ projectId: 'my-project', apiEndpoint: 'europe-west1-pubsub.googleapis.com:443' }).emulator).toBe(false);
    expect(resolvePubSubPublisherOptions({ projectId: 'my-project', apiEndpoint: 'localhost:8085' }).emulator).toBe(true);
  });

  it.each([
    [{}, 'projectId', /project id/],
    [{ projectId: 'My Project' }, 'projectId', /lowercase/],
    [{ projectId: 'my-project', topicPrefix: '1x' }, 'topicPrefix', /start with a letter/],
    [{ projectId: 'my-project', topicPrefix: 'goog-x' }, 'topicPrefix', /goog/],
    [{ projectId: 'my-project', topicPrefix: 'a/b' }, 'topicPrefix', /letters, digits/],
    [{ projectId: 'my-project', apiEndpoint: 'http://user:pw@host/path' }, 'apiEndpoint', /host\[:port\]/],
    [{ projectId: 'my-project', publishTimeoutMs: 0 }, 'publishTimeoutMs', /publishTimeoutMs/],
    [{ projectId: 'my-project', ordering: 'yes' }, 'ordering', /true or false/],
    [{ projectId: 'my-project', batching: { maxMessages: 5000 } }, 'batching.maxMessages', /1 to 1000/],
    [{ projectId: 'my-project', clientConfig: { projectId: 'other' } }, 'clientConfig.projectId', /projectId instead/],
    [{ projectId: 'my-project', logger: console.log }, 'logger', /pino/],
    [{ projectId: 'my-project', topicPrefx: 'x' }, '"topicPrefx"', /not an option/],
  ])('refuses %j naming the option and the fix', (options, option, fix) => {
    const error = refused(options);
    expect(error.code).toBe('OUTBOXER_INVALID_OPTION');
    expect(error.message).toContain(`pubsub publisher option ${option}`);
    expect(error.message).toMatch(fix);
  });

  it('creates no client and makes no call until used: a publisher for a missing project is made and closed quietly', async () => {
    const publisher = createPubSubPublisher({ projectId: 'no-such-project', apiEndpoint: '127.0.0.1:9' });
    expect(publisher.connectionState?.()).toBe('connecting');
    await publisher.close();
    expect(publisher.connectionState?.()).toBe('disconnected');
  });

  it.each([
    ['pubsub://pubsub.googleapis.com/my-project', { projectId: 'my-project', apiEndpoint: 'pubsub.googleapis.com' }],
    ['pubsub://europe-west1-pubsub.googleapis.com:443/my-project', { projectId: 'my-project', apiEndpoint: 'europe-west1-pubsub.googleapis.com:443' }],
    ['pubsub://127.0.0.1:8085/outboxer-test', { projectId: 'outboxer-test', apiEndpoint: '127.0.0.1:8085' }],
  ])('reads the CLI broker URL %s', (url, expected) => {
    expect(pubSubOptionsFromUrl(url)).toEqual(expected);
    expect(resolvePubSubPublisherOptions(pubSubOptionsFromUrl(url)).projectId).toBe(expected.projectId);
  });

  it.each([
    ['https://pubsub.googleapis.com/my-project', /pubsub:\/\//],
    ['pubsub://user:hunter2@pubsub.googleapis.com/my-project', /credentials/],
    ['pubsub://pubsub.googleapis.com/', /<projectId>/],
    ['pubsub://pubsub.googleapis.com/a/b', /<projectId>/],
    ['not a url', /not a URL/],
  ])('refuses the broker URL %s, naming the form it takes and never echoing a password', (url, fix) => {
    let error: unknown;
    try {
      pubSubOptionsFromUrl(url);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(fix);
    expect((error as Error).message).not.toContain('hunter2');
  });
});
