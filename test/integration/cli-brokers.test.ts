import { afterEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import type { BrokerRig } from '../support/broker-rigs.js';
import { amqp10Receiver, amqp10Url, isolatedAmqp10Target } from '../support/amqp10-harness.js';
import { cliFixtures, waitUntil } from '../support/cli-fixtures.js';
import { mqttRig } from '../support/mqtt-rig.js';
import { pubsubRig } from '../support/pubsub-rig.js';
import { redisRig } from '../support/redis-rig.js';
import { services } from '../support/services.js';
import { createQueue, queueReader, sqsAdmin, useFauxqs } from '../support/sqs-harness.js';
import { newSecret, WebhookReceiver } from '../support/webhook-harness.js';

const { freshSchema, start, insert, countRows } = cliFixtures();

/** What every `outboxer relay --publisher <name>` run shows: started, rows gone, a clean SIGTERM, its flags logged. */
async function relayThrough(args: readonly string[], topic: string, extraEnv: Readonly<Record<string, string>> = {}) {
  const { env, table } = freshSchema({ OUTBOXER_MIGRATE: 'true', ...extraEnv });
  const relay = start(['relay', ...args, '--poll-interval-ms', '50', '--database-url', services.postgresUrl], env);
  await relay.waitForOutput((out) => out.stderr.includes('"relay started"'), 'the relay to start');
  const ids = await insert(table, 6, topic);
  await waitUntil(async () => (await countRows(table)) === 0, 'every row published and marked', relay);
  const finish = async () => {
    const result = await relay.stop('SIGTERM');
    expect(result.code, result.stderr).toBe(0);
    const logs = result.stderr
      .trim()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    return { result, startup: logs.find((line) => line.msg === 'outboxer relay starting') };
  };
  return { ids, finish };
}

describe.each([
  { name: 'redis', makeRig: redisRig, logged: 'streamPrefix' },
  { name: 'mqtt', makeRig: mqttRig, logged: 'topicPrefix' },
  { name: 'pubsub', makeRig: pubsubRig, logged: undefined },
])('outboxer relay --publisher $name', ({ name, makeRig, logged }) => {
  let rig: BrokerRig | undefined;
  afterEach(async () => {
    await rig?.cleanup();
    rig = undefined;
  });

  it('publishes committed rows in key order, stops on SIGTERM with exit 0, and logs its own flags', async () => {
    rig = await makeRig();
    const { ids, finish } = await relayThrough(rig.cliArgs(), rig.topic('cli'));
    await waitUntil(async () => ids.every((id) => rig?.deliveries.includes(id)), `the ${name} consumer to get all six`);
    const byKey = (key: number) => ids.filter((_, i) => (i + 1) % 3 === key);
    for (const key of [0, 1, 2]) expect(rig.deliveries.filter((id) => byKey(key).includes(id))).toEqual(byKey(key));
    const { startup } = await finish();
    expect(startup).toMatchObject({ publisher: name });
    if (logged !== undefined) expect(startup?.[logged]).toBeTypeOf('string');
  });
});

describe('outboxer relay --publisher webhook', () => {
  it('POSTs each row signed with the secret, which it never logs', async () => {
    const receiver = await WebhookReceiver.start();
    const secret = newSecret();
    try {
      const { ids, finish } = await relayThrough(['--publisher', 'webhook', '--broker-url', receiver.url('/hooks/outbox')], 'orders.created', {
        OUTBOXER_WEBHOOK_SECRET: secret,
      });
      const requests = await receiver.waitForRequests(ids.length);
      const verifier = new Webhook(secret);
      for (const request of requests) verifier.verify(request.body.toString('utf8'), request.headers as Record<string, string>);
      expect(requests.map((request) => request.headers['webhook-id']).sort()).toEqual([...ids].sort());
      const { result, startup } = await finish();
      expect(startup).toMatchObject({ publisher: 'webhook' });
      expect(result.stderr + result.stdout).not.toContain(secret);
    } finally {
      await receiver.close();
    }
  });

  it('refuses to start without a secret, saying which flag or variable to set', async () => {
    const { env } = freshSchema({ OUTBOXER_MIGRATE: 'true' });
    const relay = start(['relay', '--publisher', 'webhook', '--broker-url', 'http://127.0.0.1:9/x', '--database-url', services.postgresUrl], env);
    const result = await relay.waitForExit();
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('--webhook-secret or OUTBOXER_WEBHOOK_SECRET');
  });
});

describe('outboxer relay --publisher sqs (on the fauxqs emulator)', () => {
  const fauxqs = useFauxqs();

  it('sends every row to the queue of --broker-url through --aws-endpoint, with credentials from the SDK chain', async () => {
    const admin = sqsAdmin(fauxqs().endpoint);
    const queue = await createQueue(admin, `cli-${Date.now()}`);
    const awsEnv = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
    const args = ['--publisher', 'sqs', '--broker-url', queue.url, '--aws-endpoint', fauxqs().endpoint, '--aws-region', 'us-east-1'];
    const { ids, finish } = await relayThrough(args, 'orders.created', awsEnv);
    const received = await queueReader(admin, queue.url)(ids.length);
    expect(received.map((message) => message.MessageAttributes?.['outbox-id']?.StringValue).sort()).toEqual([...ids].sort());
    const { startup } = await finish();
    expect(startup).toMatchObject({ publisher: 'sqs', awsRegion: 'us-east-1' });
  });
});

describe("outboxer relay --publisher amqp10 (on RabbitMQ's AMQP 1.0 plugin)", () => {
  it('sends every row to the address the --address template makes of its topic', async () => {
    const target = await isolatedAmqp10Target();
    const receiver = await amqp10Receiver(target.queue);
    try {
      const args = ['--publisher', 'amqp10', '--broker-url', amqp10Url, '--address', target.address];
      const { ids, finish } = await relayThrough(args, target.topic('cli'));
      await waitUntil(async () => receiver.messages.length >= ids.length, 'the AMQP 1.0 receiver to get all six');
      expect(receiver.messages.map((message) => String(message.message_id)).sort()).toEqual([...ids].sort());
      const { startup } = await finish();
      expect(startup).toMatchObject({ publisher: 'amqp10', address: target.address });
    } finally {
      await receiver.close();
      await target.cleanup();
    }
  });
});
