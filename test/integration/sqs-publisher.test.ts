import { createHash } from 'node:crypto';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { DeleteQueueCommand, KmsThrottled, QueueDoesNotExist, RequestThrottled, type SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError, type OutboxerError, PublishError } from '../../src/core/errors.js';
import { failureAction } from '../../src/core/publish-failure.js';
import type { Publisher } from '../../src/core/ports.js';
import { entryFailure, toPublishError } from '../../src/brokers/aws/errors.js';
import { createSqsPublisher, resolveSqsPublisherOptions, type SqsPublisherOptions } from '../../src/brokers/sqs/index.js';
import { describePublisherConformance, testMessage } from '../conformance/publisher-conformance.js';
import { settle } from '../support/captured-errors.js';
import { uniqueName } from '../support/services.js';
import { createQueue, emulatorOptions, fromSqsMessage, queueReader, sqsAdmin, sqsHarness, unreachableEndpoint, useFauxqs } from '../support/sqs-harness.js';

const fauxqs = useFauxqs();
describePublisherConformance(sqsHarness(fauxqs));

describe('SQS publisher on fauxqs', () => {
  let admin: SQSClient;
  const queues: string[] = [];
  const publishers: Publisher[] = [];
  beforeAll(() => {
    admin = sqsAdmin(fauxqs().endpoint);
  });
  afterEach(async () => {
    await Promise.all(publishers.splice(0).map((publisher) => publisher.close()));
    await Promise.all(queues.splice(0).map((QueueUrl) => admin.send(new DeleteQueueCommand({ QueueUrl }))));
  });
  afterAll(() => admin.destroy());

  const queue = async (name = uniqueName('q'), attributes: Record<string, string> = {}) => {
    const created = await createQueue(admin, name, attributes);
    queues.push(created.url);
    return { ...created, read: queueReader(admin, created.url) };
  };
  const publisher = (options: Partial<SqsPublisherOptions>): Publisher => {
    const made = createSqsPublisher({ ...emulatorOptions(fauxqs().endpoint), ...options } as SqsPublisherOptions);
    publishers.push(made);
    return made;
  };
  /** The SendMessageBatch requests fauxqs answers from now on: how many entries each carried. */
  const batchesFromNow = () => {
    const start = fauxqs().requests.length;
    return () =>
      fauxqs()
        .requests.slice(start)
        .filter((request) => request.action === 'SendMessageBatch')
        .map((request) => request.entries);
  };

  it('puts the message on the wire as documented: body as stored, id, type, topic, key, content type and headers as string attributes', async () => {
    const { url, read } = await queue();
    const sqs = publisher({ queueUrl: url });
    const keyed = testMessage('orders.created', {
      headers: { 'correlation-id': 'c-1', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    });
    await sqs.publish(keyed);
    const [raw] = await read(1);
    expect(raw?.Body).toBe(keyed.body);
    expect(raw?.MessageAttributes).toEqual({
      'outbox-id': { DataType: 'String', StringValue: keyed.id },
      'outbox-type': { DataType: 'String', StringValue: 'order.created' },
      'outbox-topic': { DataType: 'String', StringValue: 'orders.created' },
      'outbox-key': { DataType: 'String', StringValue: 'order-1' },
      'content-type': { DataType: 'String', StringValue: 'application/json' },
      'outbox-headers': { DataType: 'String', StringValue: JSON.stringify(keyed.headers) },
    });
    const plain = testMessage('orders.plain', { key: null, headers: {} });
    await sqs.publish(plain);
    const second = (await read(2))[1];
    expect(Object.keys(second?.MessageAttributes ?? {}).sort()).toEqual(['content-type', 'outbox-id', 'outbox-topic', 'outbox-type']);
    expect(second?.Attributes?.MessageGroupId).toBeUndefined();
  });

  it('sends a binary body, and JSON text SQS cannot carry, as base64 with outbox-body-encoding: base64', async () => {
    const { url, read } = await queue();
    const sqs = publisher({ queueUrl: url });
    const binary = testMessage('files.stored', { body: Uint8Array.from([0, 1, 0xfe, 0xff, 0x0b]), contentType: 'application/x-protobuf' });
    const odd = testMessage('files.stored', { key: 'other', body: '{"text":"\uffff"}' });
    await Promise.all([sqs.publish(binary), sqs.publish(odd)]);
    const received = await read(2);
    const byId = new Map(received.map((raw) => [fromSqsMessage(raw).id, raw]));
    const rawBinary = byId.get(binary.id);
    expect(rawBinary?.Body).toBe(Buffer.from([0, 1, 0xfe, 0xff, 0x0b]).toString('base64'));
    expect(rawBinary?.MessageAttributes?.['outbox-body-encoding']?.StringValue).toBe('base64');
    expect(rawBinary?.MessageAttributes?.['content-type']?.StringValue).toBe('application/x-protobuf');
    const rawOdd = byId.get(odd.id);
    expect(Buffer.from(rawOdd?.Body ?? '', 'base64').toString('utf8')).toBe(odd.body);
    expect(rawOdd?.MessageAttributes?.['content-type']?.StringValue).toBe('application/json');
  });

  it('on a FIFO queue sets MessageGroupId from the key (fixed for no key, hashed when SQS cannot take it) and MessageDeduplicationId = id', async () => {
    const { url, read } = await queue(`${uniqueName('f')}.fifo`);
    const sqs = publisher({ queueUrl: url });
    const keyed = testMessage('orders.created', { key: 'order-7' });
    const keyless = testMessage('orders.created', { key: null });
    const spaced = testMessage('orders.created', { key: 'Kunde Müller 7' });
    await Promise.all([sqs.publish(keyed), sqs.publish(keyless), sqs.publish(spaced)]);
    const received = await read(3);
    const groups = new Map(received.map((raw) => [fromSqsMessage(raw).id, [raw.Attributes?.MessageGroupId, raw.Attributes?.MessageDeduplicationId]]));
    expect(groups.get(keyed.id)).toEqual(['order-7', keyed.id]);
    expect(groups.get(keyless.id)).toEqual(['outboxer-no-key', keyless.id]);
    expect(groups.get(spaced.id)).toEqual([`sha256:${createHash('sha256').update('Kunde Müller 7').digest('hex')}`, spaced.id]);
    expect(fromSqsMessage(received.find((raw) => fromSqsMessage(raw).id === spaced.id) ?? {}).key).toBe('Kunde Müller 7');

    // a retry of the same id is confirmed and deduplicated by the queue: only the next message arrives
    await expect(sqs.publish(keyed)).resolves.toBeUndefined();
    const next = testMessage('orders.created', { key: 'order-7' });
    await sqs.publish(next);
    const after = await read(4);
    expect(after.slice(3).map((raw) => fromSqsMessage(raw).id)).toEqual([next.id]);
  });

  it('uses nullKeyGroupId for messages without a key on a FIFO queue', async () => {
    const { url, read } = await queue(`${uniqueName('f')}.fifo`);
    await publisher({ queueUrl: url, nullKeyGroupId: 'unkeyed-orders' }).publish(testMessage('orders.created', { key: null }));
    const [raw] = await read(1);
    expect(raw?.Attributes?.MessageGroupId).toBe('unkeyed-orders');
  });

  it('sends concurrent publishes to one queue in batches of at most 10, each publish settled by its own entry', async () => {
    const { url, read } = await queue();
    const sqs = publisher({ queueUrl: url });
    const batches = batchesFromNow();
    const messages = Array.from({ length: 25 }, (_, i) => testMessage('orders.created', { key: `k${i}` }));
    await Promise.all(messages.map((message) => sqs.publish(message)));
    expect(batches()).toEqual([10, 10, 5]);
    expect((await read(25)).length).toBe(25);
  });

  it('waits batchWindowMs for publishes started in later turns; with the default 0 it does not wait', async () => {
    const { url } = await queue();
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    for (const [window, expected] of [
      [20, [2]],
      [0, [1, 1]],
    ] as const) {
      const sqs = publisher({ queueUrl: url, batchWindowMs: window });
      const batches = batchesFromNow();
      const first = sqs.publish(testMessage('orders.created'));
      await nextTurn();
      await Promise.all([first, sqs.publish(testMessage('orders.created', { key: 'k2' }))]);
      expect(batches()).toEqual(expected);
    }
  });

  it('settles each entry of a 200 answer by itself: a Failed entry (SenderFault) fails for good, its neighbours are stored', async () => {
    const { url, read } = await queue(uniqueName('small'), { MaximumMessageSize: '1024' });
    const sqs = publisher({ queueUrl: url });
    const batches = batchesFromNow();
    const small = Array.from({ length: 3 }, (_, i) => testMessage('orders.created', { key: `s${i}` }));
    const big = testMessage('orders.created', { key: 'big', body: JSON.stringify({ pad: 'x'.repeat(2000) }) });
    const outcomes = await Promise.all([...small, big].map((message) => settle(sqs.publish(message))));
    expect(batches()).toEqual([4]);
    expect(outcomes.slice(0, 3)).toEqual([undefined, undefined, undefined]);
    const failure = outcomes[3] as PublishError;
    expect(failure).toBeInstanceOf(PublishError);
    expect({ code: failure.code, permanent: failure.permanent }).toEqual({ code: 'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER', permanent: true });
    expect(failure.message).toContain(big.id);
    expect(failure.message).not.toContain('xxxx');
    expect(new Set((await read(3)).map((raw) => fromSqsMessage(raw).id))).toEqual(new Set(small.map((m) => m.id)));
  });

  it('refuses a message over maxMessageBytes without a request, and splits batches so none is over it', async () => {
    const { url, read } = await queue();
    const sqs = publisher({ queueUrl: url, maxMessageBytes: 4096 });
    expect(sqs.capabilities.maxMessageBytes).toBe(4096);
    expect(publisher({ queueUrl: url }).capabilities.maxMessageBytes).toBe(262_144);
    const batches = batchesFromNow();
    const huge = testMessage('orders.created', { body: JSON.stringify({ pad: 'y'.repeat(5000) }) });
    const error = (await settle(sqs.publish(huge))) as PublishError;
    expect({ code: error.code, permanent: error.permanent }).toEqual({ code: 'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER', permanent: true });
    expect(failureAction(error)).toBe('dead');
    expect(batches()).toEqual([]);
    const sized = Array.from({ length: 5 }, (_, i) => testMessage('orders.created', { key: `z${i}`, body: JSON.stringify({ pad: 'z'.repeat(1500) }) }));
    await Promise.all(sized.map((message) => sqs.publish(message)));
    expect(batches()).toEqual([2, 2, 1]);
    expect((await read(5)).length).toBe(5);
  });

  it('routes topics: routes first, then queueUrlPrefix + topic; a topic that makes no queue name is refused for good', async () => {
    const prefixName = uniqueName('p');
    const orders = await queue(`${prefixName}orders`);
    const audit = await queue();
    const prefix = orders.url.slice(0, -'orders'.length);
    const sqs = publisher({ queueUrlPrefix: prefix, routes: { 'audit.log': audit.url } });
    const batches = batchesFromNow();
    await sqs.publish(testMessage('orders'));
    await sqs.publish(testMessage('audit.log'));
    expect(fromSqsMessage((await orders.read(1))[0] ?? {}).topic).toBe('orders');
    expect(fromSqsMessage((await audit.read(1))[0] ?? {}).topic).toBe('audit.log');
    const dotted = (await settle(sqs.publish(testMessage('orders.created')))) as PublishError;
    expect({ code: dotted.code, permanent: dotted.permanent }).toEqual({ code: 'OUTBOXER_INVALID_TOPIC', permanent: true });
    expect(dotted.message).toMatch(/routes or resolveQueueUrl/);
    expect(batches()).toEqual([1, 1]);
  });

  it('pauses a topic with no queue: a missing queue, or a resolver without an answer, is a retryable OUTBOXER_UNROUTABLE', async () => {
    const { url } = await queue();
    const missing = url.replace(/[^/]+$/, uniqueName('absent'));
    const missingError = (await settle(publisher({ queueUrl: missing }).publish(testMessage('orders.created')))) as PublishError;
    expect({ code: missingError.code, permanent: missingError.permanent }).toEqual({ code: 'OUTBOXER_UNROUTABLE', permanent: false });
    expect(failureAction(missingError)).toBe('pause-topic');
    expect(missingError.message).toContain(missing);
    expect(missingError.message).toMatch(/create it/);
    const resolver = publisher({ resolveQueueUrl: (topic) => (topic === 'orders.created' ? url : undefined) });
    await expect(resolver.publish(testMessage('orders.created'))).resolves.toBeUndefined();
    const unresolved = (await settle(resolver.publish(testMessage('billing.due')))) as PublishError;
    expect(unresolved.code).toBe('OUTBOXER_UNROUTABLE');
    const routesOnly = (await settle(publisher({ routes: { 'orders.created': url } }).publish(testMessage('billing.due')))) as PublishError;
    expect(routesOnly.code).toBe('OUTBOXER_UNROUTABLE');
  });

  it('verify() proves the queue exists and the endpoint answers; a missing queue and no endpoint are told apart', async () => {
    const { url } = await queue();
    await expect(publisher({ queueUrl: url }).verify?.()).resolves.toBeUndefined();
    await expect(publisher({ queueUrlPrefix: url.replace(/[^/]+$/, '') }).verify?.()).resolves.toBeUndefined();
    const missing = (await settle(publisher({ queueUrl: url.replace(/[^/]+$/, uniqueName('absent')) }).verify?.() ?? Promise.resolve())) as PublishError;
    expect(missing.code).toBe('OUTBOXER_UNROUTABLE');
    const nowhere = await unreachableEndpoint();
    const down = publisher({ endpoint: nowhere.endpoint, queueUrl: nowhere.queueUrl, publishTimeoutMs: 2000 });
    const unavailable = (await settle(down.verify?.() ?? Promise.resolve())) as PublishError;
    expect({ code: unavailable.code, permanent: unavailable.permanent }).toEqual({ code: 'OUTBOXER_BROKER_UNAVAILABLE', permanent: false });
    const publishError = (await settle(down.publish(testMessage('orders.created')))) as PublishError;
    expect(failureAction(publishError)).toBe('release');
  });

  it('bounds a publish to an endpoint that accepts the connection but never answers: OUTBOXER_PUBLISH_TIMEOUT', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const endpoint = `http://127.0.0.1:${port}`;
      const sqs = publisher({ endpoint, queueUrl: `${endpoint}/000000000000/silent`, publishTimeoutMs: 800 });
      const started = performance.now();
      const error = (await settle(sqs.publish(testMessage('orders.created')))) as PublishError;
      expect({ code: error.code, permanent: error.permanent }).toEqual({ code: 'OUTBOXER_PUBLISH_TIMEOUT', permanent: false });
      expect(performance.now() - started).toBeLessThan(800 + 1500);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('sends what was accepted before close, and refuses what comes after', async () => {
    const { url, read } = await queue();
    const sqs = createSqsPublisher({ ...emulatorOptions(fauxqs().endpoint), queueUrl: url, batchWindowMs: 50 });
    const accepted = sqs.publish(testMessage('orders.created'));
    await sqs.close();
    await expect(accepted).resolves.toBeUndefined();
    expect((await read(1)).length).toBe(1);
    const late = (await settle(sqs.publish(testMessage('orders.created')))) as OutboxerError;
    expect(late.code).toBe('OUTBOXER_CLOSED');
  });
});

describe('SQS errors as outboxer codes', () => {
  const context = {
    service: 'SQS',
    kind: 'queue',
    what: 'message m-1',
    destination: 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders',
    timeoutMs: 1000,
    secrets: ['s3cret'],
  };
  const metadata = { $metadata: { httpStatusCode: 400 } };

  it('maps what the SDK throws for a request', () => {
    const cases: [unknown, string, boolean][] = [
      [new QueueDoesNotExist({ message: 'The specified queue does not exist.', ...metadata }), 'OUTBOXER_UNROUTABLE', false],
      [new RequestThrottled({ message: 'slow down', ...metadata }), 'OUTBOXER_RATE_LIMITED', false],
      [new KmsThrottled({ message: 'kms slow down', ...metadata }), 'OUTBOXER_RATE_LIMITED', false],
      [
        Object.assign(new Error('The security token included in the request is invalid s3cret'), {
          name: 'InvalidClientTokenId',
          $fault: 'client',
          $metadata: { httpStatusCode: 403 },
        }),
        'OUTBOXER_AUTH_FAILED',
        false,
      ],
      [
        Object.assign(new Error('Access to the resource is denied.'), { name: 'AccessDenied', $fault: 'client', $metadata: { httpStatusCode: 403 } }),
        'OUTBOXER_AUTH_FAILED',
        false,
      ],
      [Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' }), 'OUTBOXER_AUTH_FAILED', false],
      [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), 'OUTBOXER_BROKER_UNAVAILABLE', false],
      [new TypeError('Cannot read properties of undefined'), 'OUTBOXER_PUBLISH_FAILED', false],
      [
        Object.assign(
          new Error('@smithy/node-http-handler - the request socket did not establish a connection with the server within the configured timeout of 1000 ms.'),
          { name: 'TimeoutError' },
        ),
        'OUTBOXER_BROKER_UNAVAILABLE',
        false,
      ],
      [Object.assign(new Error('This operation was aborted'), { name: 'AbortError' }), 'OUTBOXER_PUBLISH_TIMEOUT', false],
      [
        Object.assign(new Error('Value for parameter MessageGroupId is invalid'), { name: 'InvalidParameterValue', $fault: 'client', ...metadata }),
        'OUTBOXER_REJECTED',
        true,
      ],
      [
        Object.assign(new Error('Batch requests cannot be longer than 1048576 bytes.'), { name: 'BatchRequestTooLong', $fault: 'client', ...metadata }),
        'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
        true,
      ],
      [
        Object.assign(new Error('We encountered an internal error.'), { name: 'InternalError', $fault: 'server', $metadata: { httpStatusCode: 500 } }),
        'OUTBOXER_PUBLISH_FAILED',
        false,
      ],
    ];
    for (const [thrown, code, permanent] of cases) {
      const error = toPublishError(thrown, context);
      expect({ name: (thrown as Error).name, code: error.code, permanent: error.permanent }).toEqual({ name: (thrown as Error).name, code, permanent });
      expect(error.message).not.toContain('s3cret');
    }
  });

  it('maps a Failed entry of a 200 answer: SenderFault true is permanent, false retryable, throttling by its code', () => {
    expect(entryFailure({ Code: 'InvalidMessageContents', SenderFault: true, Message: 'Invalid characters' }, context)).toMatchObject({
      code: 'OUTBOXER_REJECTED',
      permanent: true,
    });
    expect(entryFailure({ Code: 'InternalError', SenderFault: false, Message: 'try again' }, context)).toMatchObject({
      code: 'OUTBOXER_PUBLISH_FAILED',
      permanent: false,
    });
    expect(entryFailure({ Code: 'RequestThrottled', SenderFault: false }, context)).toMatchObject({ code: 'OUTBOXER_RATE_LIMITED', permanent: false });
    expect(entryFailure({ Code: 'InvalidParameterValue', SenderFault: true, Message: 'Message must be shorter than 262144 bytes.' }, context)).toMatchObject({
      code: 'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
      permanent: true,
    });
  });
});

describe('SQS publisher options', () => {
  const url = 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders';
  it('refuses each bad option with a ConfigurationError naming it and the fix, never echoing a secret', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{}, /option queueUrl: a destination is required/],
      [{ queueUrl: url, queueUrlPrefix: 'https://sqs.eu-west-1.amazonaws.com/123456789012/' }, /option queueUrl and queueUrlPrefix: are alternatives/],
      [{ queueUrl: 'https://sqs.eu-west-1.amazonaws.com/orders' }, /option queueUrl: .*https:\/\/sqs\.<region>/],
      [{ queueUrl: `${url}.fif` }, /option queueUrl:/],
      [{ queueUrlPrefix: 'sqs://x/1/' }, /option queueUrlPrefix:/],
      [{ routes: { 'orders.created': 'not a url' } }, /option routes\.orders\.created:/],
      [{ resolveQueueUrl: 'https://x' }, /option resolveQueueUrl:/],
      [{ queueUrl: url, batchWindowMs: 100 }, /option batchWindowMs: .*0 to 50/],
      [{ queueUrl: url, maxBatchSize: 11 }, /option maxBatchSize: .*1 to 10/],
      [{ queueUrl: url, maxMessageBytes: 2_000_000 }, /option maxMessageBytes: .*1048576/],
      [{ queueUrl: url, publishTimeoutMs: 0 }, /option publishTimeoutMs:/],
      [{ queueUrl: url, region: 'EU West' }, /option region: .*eu-west-1/],
      [{ queueUrl: url, endpoint: 'http://user:s3cret@127.0.0.1:4566' }, /option endpoint: .*without user or password/],
      [{ queueUrl: url, credentials: { accessKeyId: 'AKID', secretAccessKey: '' } }, /option credentials:/],
      [{ queueUrl: url, nullKeyGroupId: 'has space' }, /option nullKeyGroupId:/],
      [{ queueUrl: url, logger: console.log }, /option logger:/],
      [{ queueUrl: url, queueName: 'orders' }, /option "queueName": is not an option/],
    ];
    for (const [input, message] of cases) {
      let thrown: unknown;
      try {
        createSqsPublisher(input as SqsPublisherOptions);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(input)).toBeInstanceOf(ConfigurationError);
      expect((thrown as ConfigurationError).code).toBe('OUTBOXER_INVALID_OPTION');
      expect((thrown as Error).message, JSON.stringify(input)).toMatch(message);
      expect((thrown as Error).message).not.toContain('s3cret');
    }
  });

  it('resolves once into frozen options that never show the credentials', () => {
    const resolved = resolveSqsPublisherOptions({ queueUrl: url, credentials: { accessKeyId: 'AKID', secretAccessKey: 's3cret-key' } });
    expect(Object.isFrozen(resolved)).toBe(true);
    expect(resolved).toMatchObject({
      batchWindowMs: 0,
      maxBatchSize: 10,
      maxMessageBytes: 262_144,
      publishTimeoutMs: 10_000,
      nullKeyGroupId: 'outboxer-no-key',
    });
    expect(JSON.stringify(resolved)).not.toContain('s3cret-key');
    expect(resolved.credentials).toEqual({ accessKeyId: 'AKID', secretAccessKey: 's3cret-key' });
  });
});
