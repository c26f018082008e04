import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import amqp from 'amqplib';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, startScript } from '../support/cli-runner.js';
import { freshDatabase, freshVhost } from '../support/fresh-services.js';
import { waitFor } from '../support/wait-for.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The examples resolve `outboxer/<subpath>` through the `paths` of tsconfig.json. Until `outboxer/amqp10` is listed
 * there, tsx gets a copy of that tsconfig with it added (absolute paths, in a temporary directory).
 */
async function tsconfigWithAmqp10Path(): Promise<{ env: Record<string, string>; remove(): Promise<void> }> {
  const config = JSON.parse(await readFile(join(ROOT, 'tsconfig.json'), 'utf8')) as { compilerOptions: { paths: Record<string, string[]> } };
  const paths = config.compilerOptions.paths;
  if (paths['outboxer/amqp10'] !== undefined) return { env: {}, remove: async () => undefined };
  paths['outboxer/amqp10'] = ['./src/publishers/amqp10/index.ts'];
  const absolute = Object.fromEntries(Object.entries(paths).map(([name, targets]) => [name, targets.map((target) => join(ROOT, target))]));
  const directory = await mkdtemp(join(tmpdir(), 'outboxer-tsconfig-'));
  const file = join(directory, 'tsconfig.json');
  await writeFile(file, JSON.stringify({ extends: join(ROOT, 'tsconfig.json'), compilerOptions: { paths: absolute } }));
  return { env: { TSX_TSCONFIG_PATH: file }, remove: () => rm(directory, { recursive: true, force: true }) };
}

describe('the example of docs/publishers/amqp10.md', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('publishes over AMQP 1.0 through the relay to exchange "outbox" of its virtual host, and the program ends', async () => {
    const db = await freshDatabase();
    cleanups.push(() => db.drop());
    const host = await freshVhost();
    cleanups.push(() => host.delete());
    const connection = await amqp.connect(host.url);
    cleanups.push(() => connection.close());
    const channel = await connection.createChannel();
    await channel.assertExchange('outbox', 'topic', { durable: true });
    await channel.assertQueue('everything', { durable: true });
    await channel.bindQueue('everything', 'outbox', '#');
    const tsconfig = await tsconfigWithAmqp10Path();
    cleanups.push(() => tsconfig.remove());

    const exit = await startScript('examples/publishers/amqp10.ts', [], cliEnv({ DATABASE_URL: db.url, AMQP10_URL: host.url, ...tsconfig.env })).waitForExit(60_000);
    expect({ code: exit.code, stderr: exit.stderr }).toEqual({ code: 0, stderr: '' });
    const delivery = await waitFor(async () => (await channel.get('everything', { noAck: true })) || undefined, { what: 'the published message' });
    expect(delivery.fields.routingKey).toBe('orders.created');
    expect(delivery.properties.contentType).toBe('application/json');
    expect(JSON.parse(delivery.content.toString('utf8'))).toEqual({ id: 1 });
  });
});
