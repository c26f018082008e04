import { DeleteQueueCommand } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, startScript } from '../support/cli-runner.js';
import { freshDatabase } from '../support/fresh-services.js';
import { subscribedTopic } from '../support/sns-harness.js';
import { createQueue, EMULATOR_CREDENTIALS, EMULATOR_REGION, fromSqsMessage, queueReader, sqsAdmin, useFauxqs } from '../support/sqs-harness.js';
import { uniqueName } from '../support/services.js';

/** The AWS SDK (v3.1100+) warns once per process on Node 20 that later versions need Node 22: not the example's doing. */
function withoutSdkNodeWarning(stderr: string): string {
  return stderr.replace(/\(node:\d+\) Warning: NodeVersionSupportWarning[\s\S]*?--trace-warnings[^\n]*\n/, '');
}

describe('the SQS and SNS examples the docs show, on fauxqs', () => {
  const fauxqs = useFauxqs();
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const environment = async (extra: Record<string, string>) => {
    const db = await freshDatabase();
    cleanups.push(() => db.drop());
    return cliEnv({
      DATABASE_URL: db.url,
      AWS_REGION: EMULATOR_REGION,
      AWS_ACCESS_KEY_ID: EMULATOR_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: EMULATOR_CREDENTIALS.secretAccessKey,
      AWS_ENDPOINT_URL: fauxqs().endpoint,
      ...extra,
    });
  };

  it('docs/publishers/sqs.md publishes through the relay to the queue, and the program ends', async () => {
    const admin = sqsAdmin(fauxqs().endpoint);
    const queue = await createQueue(admin, uniqueName('orders'));
    cleanups.push(async () => {
      await admin.send(new DeleteQueueCommand({ QueueUrl: queue.url }));
      admin.destroy();
    });
    const exit = await startScript('examples/publishers/sqs.ts', [], await environment({ SQS_QUEUE_URL: queue.url })).waitForExit(60_000);
    expect({ code: exit.code, stderr: withoutSdkNodeWarning(exit.stderr) }).toEqual({ code: 0, stderr: '' });
    const [received] = (await queueReader(admin, queue.url)(1)).map(fromSqsMessage);
    expect([received?.topic, received?.key, JSON.parse(received?.body ?? 'null')]).toEqual(['orders.created', 'order-1', { id: 1 }]);
  });

  it('docs/publishers/sns.md publishes through the relay to the routed topic, and the program ends', async () => {
    const topic = await subscribedTopic(fauxqs().endpoint);
    cleanups.push(() => topic.delete());
    const prefix = topic.topicArn.replace(/[^:]+$/, '');
    const exit = await startScript(
      'examples/publishers/sns.ts',
      [],
      await environment({ SNS_TOPIC_ARN_PREFIX: prefix, SNS_ORDERS_TOPIC_ARN: topic.topicArn }),
    ).waitForExit(60_000);
    expect({ code: exit.code, stderr: withoutSdkNodeWarning(exit.stderr) }).toEqual({ code: 0, stderr: '' });
    const [received] = (await topic.read(1)).map(fromSqsMessage);
    expect([received?.topic, JSON.parse(received?.body ?? 'null')]).toEqual(['orders.created', { id: 1 }]);
  });
});
