import { createHash } from 'node:crypto';
import { NotFoundException, ThrottledException } from '@aws-sdk/client-sns';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, type PublishError } from '../../src/core/errors.js';
import { failureAction } from '../../src/core/publish-failure.js';
import type { Publisher } from '../../src/core/ports.js';
import { toPublishError } from '../../src/brokers/aws/errors.js';
import { createSnsPublisher, resolveSnsPublisherOptions, type SnsPublisherOptions } from '../../src/brokers/sns/index.js';
import { describePublisherConformance, testMessage } from '../conformance/publisher-conformance.js';
import { settle } from '../support/captured-errors.js';
import { uniqueName } from '../support/services.js';
import { snsHarness, subscribedTopic, type SubscribedTopic } from '../support/sns-harness.js';
import { emulatorOptions, fromSqsMessage, unreachableEndpoint, useFauxqs } from '../support/sqs-harness.js';

const fauxqs = useFauxqs();
describePublisherConformance(snsHarness(fauxqs));

describe('SNS publisher on fauxqs', () => {
  const topics: SubscribedTopic[] = [];
  const publishers: Publisher[] = [];
  afterEach(async () => {
    await Promise.all(publishers.splice(0).map((publisher) => publisher.close()));
    await Promise.all(topics.splice(0).map((topic) => topic.delete()));
  });
  const topic = async (options: Parameters<typeof subscribedTopic>[1] = {}) => {
    const made = await subscribedTopic(fauxqs().endpoint, options);
    topics.push(made);
    return made;
  };
  const publisher = (options: Partial<SnsPublisherOptions>): Publisher => {
    const made = createSnsPublisher({ ...emulatorOptions(fauxqs().endpoint), ...options } as SnsPublisherOptions);
    publishers.push(made);
    return made;
  };
  const batchesFromNow = () => {
    const start = fauxqs().requests.length;
    return () =>
      fauxqs()
        .requests.slice(start)
        .filter((request) => request.action === 'PublishBatch')
        .map((request) => request.entries);
  };

  it('with raw delivery, an SQS subscriber reads the stored body and the outbox attributes as documented', async () => {
    const { topicArn, read } = await topic();
    const message = testMessage('orders.created');
    await publisher({ topicArn }).publish(message);
    const [raw] = await read(1);
    expect(raw?.Body).toBe(message.body);
    expect(raw?.MessageAttributes).toEqual({
      'outbox-id': { DataType: 'String', StringValue: message.id },
      'outbox-type': { DataType: 'String', StringValue: 'order.created' },
      'outbox-topic': { DataType: 'String', StringValue: 'orders.created' },
      'outbox-key': { DataType: 'String', StringValue: 'order-1' },
      'content-type': { DataType: 'String', StringValue: 'application/json' },
      'outbox-headers': { DataType: 'String', StringValue: JSON.stringify(message.headers) },
    });
  });

  it('without raw delivery, the SNS envelope carries the body as Message and the attributes as MessageAttributes', async () => {
    const { topicArn, read } = await topic({ raw: false });
    const binary = testMessage('files.stored', { body: Uint8Array.from([0, 0xff, 7]), contentType: 'application/x-protobuf' });
    await publisher({ topicArn }).publish(binary);
    const [raw] = await read(1);
    const envelope = JSON.parse(raw?.Body ?? '{}') as {
      Type: string;
      TopicArn: string;
      Message: string;
      MessageAttributes: Record<string, { Type: string; Value: string }>;
    };
    expect(envelope).toMatchObject({ Type: 'Notification', TopicArn: topicArn, Message: Buffer.from([0, 0xff, 7]).toString('base64') });
    expect(envelope.MessageAttributes['outbox-body-encoding']).toEqual({ Type: 'String', Value: 'base64' });
    expect(envelope.MessageAttributes['outbox-id']).toEqual({ Type: 'String', Value: binary.id });
  });

  it('on a FIFO topic sets MessageGroupId from the key and MessageDeduplicationId = id, which reach a FIFO queue', async () => {
    const { topicArn, read } = await topic({ name: `${uniqueName('ft')}.fifo` });
    const sns = publisher({ topicArn });
    const keyed = testMessage('orders.created', { key: 'order-9' });
    const keyless = testMessage('orders.created', { key: null });
    const spaced = testMessage('orders.created', { key: 'Kunde Müller 7' });
    await Promise.all([sns.publish(keyed), sns.publish(keyless), sns.publish(spaced)]);
    const received = await read(3);
    const groups = new Map(received.map((raw) => [fromSqsMessage(raw).id, [raw.Attributes?.MessageGroupId, raw.Attributes?.MessageDeduplicationId]]));
    expect(groups.get(keyed.id)).toEqual(['order-9', keyed.id]);
    expect(groups.get(keyless.id)).toEqual(['outboxer-no-key', keyless.id]);
    expect(groups.get(spaced.id)).toEqual([`sha256:${createHash('sha256').update('Kunde Müller 7').digest('hex')}`, spaced.id]);
    await expect(sns.publish(keyed)).resolves.toBeUndefined();
    const next = testMessage('orders.created', { key: 'order-9' });
    await sns.publish(next);
    expect((await read(4)).slice(3).map((raw) => fromSqsMessage(raw).id)).toEqual([next.id]);
  });

  it('sends concurrent publishes to one topic with PublishBatch, at most 10 entries a request', async () => {
    const { topicArn, read } = await topic();
    const sns = publisher({ topicArn });
    const batches = batchesFromNow();
    await Promise.all(Array.from({ length: 23 }, (_, i) => sns.publish(testMessage('orders.created', { key: `k${i}` }))));
    expect(batches()).toEqual([10, 10, 3]);
    expect((await read(23)).length).toBe(23);
  });

  it('refuses a message over maxMessageBytes (256 KiB at most) without a request', async () => {
    const { topicArn } = await topic();
    const sns = publisher({ topicArn });
    expect(sns.capabilities.maxMessageBytes).toBe(262_144);
    const batches = batchesFromNow();
    const error = (await settle(sns.publish(testMessage('orders.created', { body: JSON.stringify({ pad: 'x'.repeat(262_144) }) })))) as PublishError;
    expect({ code: error.code, permanent: error.permanent }).toEqual({ code: 'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER', permanent: true });
    expect(batches()).toEqual([]);
  });

  it('routes with topicArnPrefix + topic and routes; a missing topic pauses, a dotted topic under the prefix is refused', async () => {
    const name = uniqueName('orders');
    const orders = await topic({ name });
    const audit = await topic();
    const prefix = orders.topicArn.slice(0, -name.length);
    const sns = publisher({ topicArnPrefix: prefix, routes: { 'audit.log': audit.topicArn } });
    await sns.publish(testMessage(name));
    await sns.publish(testMessage('audit.log'));
    expect(fromSqsMessage((await orders.read(1))[0] ?? {}).topic).toBe(name);
    expect(fromSqsMessage((await audit.read(1))[0] ?? {}).topic).toBe('audit.log');
    const missing = (await settle(sns.publish(testMessage(uniqueName('absent'))))) as PublishError;
    expect({ code: missing.code, permanent: missing.permanent, action: failureAction(missing) }).toEqual({
      code: 'OUTBOXER_UNROUTABLE',
      permanent: false,
      action: 'pause-topic',
    });
    const dotted = (await settle(sns.publish(testMessage('orders.created')))) as PublishError;
    expect({ code: dotted.code, permanent: dotted.permanent }).toEqual({ code: 'OUTBOXER_INVALID_TOPIC', permanent: true });
  });

  it('verify() checks the topic, or lists topics when there is no fixed one; no endpoint is OUTBOXER_BROKER_UNAVAILABLE', async () => {
    const { topicArn } = await topic();
    await expect(publisher({ topicArn }).verify?.()).resolves.toBeUndefined();
    await expect(publisher({ topicArnPrefix: topicArn.replace(/[^:]+$/, '') }).verify?.()).resolves.toBeUndefined();
    const missing = (await settle(publisher({ topicArn: `${topicArn}-gone` }).verify?.() ?? Promise.resolve())) as PublishError;
    expect(missing.code).toBe('OUTBOXER_UNROUTABLE');
    const { endpoint } = await unreachableEndpoint();
    const down = (await settle(publisher({ endpoint, topicArn, publishTimeoutMs: 2000 }).verify?.() ?? Promise.resolve())) as PublishError;
    expect({ code: down.code, permanent: down.permanent }).toEqual({ code: 'OUTBOXER_BROKER_UNAVAILABLE', permanent: false });
  });
});

describe('SNS errors and options', () => {
  const context = {
    service: 'SNS',
    kind: 'topic',
    what: 'message m-1',
    destination: 'arn:aws:sns:eu-west-1:123456789012:orders',
    timeoutMs: 1000,
    secrets: [],
  };

  it('maps the SNS exceptions by their code', () => {
    const metadata = { $metadata: { httpStatusCode: 400 } };
    expect(toPublishError(new NotFoundException({ message: 'Topic does not exist', ...metadata }), context)).toMatchObject({
      code: 'OUTBOXER_UNROUTABLE',
      permanent: false,
    });
    expect(toPublishError(new ThrottledException({ message: 'Rate exceeded', ...metadata }), context)).toMatchObject({
      code: 'OUTBOXER_RATE_LIMITED',
      permanent: false,
    });
    const denied = Object.assign(new Error('not authorized to perform SNS:Publish'), {
      name: 'AuthorizationErrorException',
      $fault: 'client',
      $metadata: { httpStatusCode: 403 },
    });
    expect(toPublishError(denied, context)).toMatchObject({ code: 'OUTBOXER_AUTH_FAILED', permanent: false });
  });

  it('refuses bad options naming the option and the fix', () => {
    const arn = 'arn:aws:sns:eu-west-1:123456789012:orders';
    const cases: [Record<string, unknown>, RegExp][] = [
      [{}, /sns publisher option topicArn: a destination is required/],
      [{ topicArn: arn, resolveTopicArn: () => arn }, /option topicArn and resolveTopicArn: are alternatives/],
      [{ topicArn: 'arn:aws:sqs:eu-west-1:123456789012:orders' }, /option topicArn: .*arn:aws:sns:<region>/],
      [{ topicArnPrefix: 'arn:aws:sns:eu-west-1:1234:' }, /option topicArnPrefix:/],
      [{ topicArn: arn, maxMessageBytes: 262_145 }, /option maxMessageBytes: .*262144/],
      [{ topicArn: arn, subject: 'x' }, /option "subject": is not an option/],
    ];
    for (const [input, message] of cases) {
      let thrown: unknown;
      try {
        createSnsPublisher(input as SnsPublisherOptions);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(input)).toBeInstanceOf(ConfigurationError);
      expect((thrown as Error).message, JSON.stringify(input)).toMatch(message);
    }
    const resolved = resolveSnsPublisherOptions({ topicArn: arn });
    expect(Object.isFrozen(resolved)).toBe(true);
    expect(resolved).toMatchObject({ topicArn: arn, maxMessageBytes: 262_144, maxBatchSize: 10, batchWindowMs: 0 });
  });
});
