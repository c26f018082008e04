import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { createClient, RESP_TYPES } from 'redis';
import type { Logger } from '../../src/core/ports.js';
import { createRedisPublisher, REDIS_HEADER_PREFIX, RedisFieldNames } from '../../src/brokers/redis/index.js';
import type { PublisherHarness, ReceivedMessage } from '../conformance/publisher-conformance.js';
import { uniqueName } from './services.js';
import { waitFor } from './wait-for.js';

const run = promisify(execFile);

/** The shared Redis of the test machine (services.ts has no entry for it yet). */
export const redisUrl = process.env.OUTBOXER_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A TCP port nothing listens on (taken from the OS, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** A plain node-redis client that returns every string as a Buffer (binary bodies stay exact). */
export async function redisAdmin(url = redisUrl) {
  const client = createClient({ url, socket: { reconnectStrategy: false } });
  client.on('error', () => undefined);
  await client.connect();
  return client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
}
export type RedisAdmin = Awaited<ReturnType<typeof redisAdmin>>;

/** A command with every string of its reply as a Buffer (sendCommand ignores withTypeMapping). */
export function raw<T>(admin: RedisAdmin, args: string[]): Promise<T> {
  return admin.sendCommand(args, { typeMapping: { [RESP_TYPES.BLOB_STRING]: Buffer } }) as Promise<T>;
}

/** One stream entry as the server holds it: its id and its fields in order, values as bytes. */
export interface RawEntry {
  readonly entryId: string;
  readonly fields: readonly (readonly [string, Buffer])[];
}

/** XRANGE of a whole stream, fields in the order they were written. */
export async function xrange(admin: RedisAdmin, stream: string): Promise<RawEntry[]> {
  const reply = await raw<[Buffer, Buffer[]][]>(admin, ['XRANGE', stream, '-', '+']);
  return reply.map(([entryId, flat]) => {
    const fields: [string, Buffer][] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) fields.push([(flat[i] as Buffer).toString('utf8'), flat[i + 1] as Buffer]);
    return { entryId: entryId.toString('utf8'), fields };
  });
}

/** An entry read back as a consumer does it, by the documented field names. */
export function received(stream: string, streamPrefix: string, entry: RawEntry): ReceivedMessage {
  const field = new Map(entry.fields);
  const text = (name: string) => field.get(name)?.toString('utf8');
  const headers: Record<string, string> = {};
  for (const [name, value] of entry.fields) if (name.startsWith(REDIS_HEADER_PREFIX)) headers[name.slice(REDIS_HEADER_PREFIX.length)] = value.toString('utf8');
  const bytes = field.get(RedisFieldNames.body) ?? Buffer.alloc(0);
  return {
    id: text(RedisFieldNames.id) ?? '',
    topic: stream.slice(streamPrefix.length),
    type: text(RedisFieldNames.type) ?? '',
    key: text(RedisFieldNames.key) ?? null,
    headers,
    body: bytes.toString('utf8'),
    bytes: new Uint8Array(bytes),
    contentType: text(RedisFieldNames.contentType),
  };
}

/** The streams whose names start with `streamPrefix` (SCAN, never KEYS). */
export async function streamsUnder(admin: RedisAdmin, streamPrefix: string): Promise<string[]> {
  const found: string[] = [];
  const pattern = `${streamPrefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
  let cursor = '0';
  do {
    const [next, keys] = await raw<[Buffer, Buffer[]]>(admin, ['SCAN', cursor, 'MATCH', pattern, 'COUNT', '1000']);
    cursor = next.toString('utf8');
    for (const key of keys) found.push(key.toString('utf8'));
  } while (cursor !== '0');
  return found.sort();
}

/** Every entry of every stream under the prefix. */
export async function readAll(admin: RedisAdmin, streamPrefix: string): Promise<ReceivedMessage[]> {
  const all: ReceivedMessage[] = [];
  for (const stream of await streamsUnder(admin, streamPrefix)) {
    for (const entry of await xrange(admin, stream)) all.push(received(stream, streamPrefix, entry));
  }
  return all;
}

/** Deletes every key under the prefix: a test leaves nothing behind. */
export async function dropPrefix(admin: RedisAdmin, streamPrefix: string): Promise<void> {
  const keys = await streamsUnder(admin, streamPrefix);
  if (keys.length > 0) await admin.del(keys);
}

/** A logger that keeps every line as JSON text, to search for secrets. */
export function recordingLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, message: string) => {
    lines.push(JSON.stringify({ level, message, ...fields }));
  };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export const redisHarness: PublisherHarness = {
  name: 'Redis Streams',
  async setup() {
    const admin = await redisAdmin();
    const streamPrefix = `${uniqueName('conf')}:`;
    const publisher = createRedisPublisher({ url: redisUrl, streamPrefix, publishTimeoutMs: 5000, connectTimeoutMs: 3000, clientName: 'outboxer-conformance' });
    return {
      publisher,
      topic: (suffix) => `orders.${suffix}`,
      unroutableTopic: null,
      async waitForMessages(count, timeoutMs = 10_000) {
        return waitFor(
          async () => {
            const all = await readAll(admin, streamPrefix);
            return all.length >= count ? all : undefined;
          },
          { timeoutMs, what: `${count} entries under ${streamPrefix}` },
        );
      },
      async cleanup() {
        await publisher.close();
        await dropPrefix(admin, streamPrefix);
        admin.destroy();
      },
    };
  },
  async unreachable(secret) {
    const port = await freePort();
    return createRedisPublisher({ url: `redis://outboxer:${secret}@127.0.0.1:${port}`, publishTimeoutMs: 2000, connectTimeoutMs: 1000 });
  },
};

/**
 * A redis-server of a test's own on a free port, without persistence, that it may configure (password, maxmemory,
 * replica of another), freeze, kill and start again without disturbing the shared server.
 */
export class PrivateRedisServer {
  #process: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    readonly extraArgs: readonly string[],
  ) {}

  static async create(extraArgs: readonly string[] = []): Promise<PrivateRedisServer> {
    return new PrivateRedisServer(await freePort(), extraArgs);
  }

  url(credentials = ''): string {
    return `redis://${credentials === '' ? '' : `${credentials}@`}127.0.0.1:${this.port}`;
  }

  /** `redis-cli` against this server (`-a` when it needs a password). */
  async cli(args: readonly string[], password?: string): Promise<string> {
    const auth = password === undefined ? [] : ['--no-auth-warning', '-a', password];
    const { stdout } = await run('redis-cli', ['-p', String(this.port), ...auth, ...args], { encoding: 'utf8' });
    return stdout;
  }

  async start(password?: string): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', '/tmp', ...this.extraArgs],
      { stdio: 'ignore' },
    );
    this.#process = child;
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
        return (await this.cli(['PING'], password)).trim() === 'PONG';
      },
      { timeoutMs: 15_000, what: `private redis-server on port ${this.port}` },
    );
  }

  /** SIGSTOP: the process keeps its socket open but answers nothing. */
  freeze(): void {
    this.#process?.kill('SIGSTOP');
  }

  thaw(): void {
    this.#process?.kill('SIGCONT');
  }

  async kill(): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }
}
