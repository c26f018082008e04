import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { connect, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node';
import type { Logger, Publisher } from '../../src/core/ports.js';
import { createNatsPublisher, decodeHeaderValue, type NatsPublisherOptions } from '../../src/brokers/nats/index.js';
import type { PublisherHarness, ReceivedMessage } from '../conformance/publisher-conformance.js';
import { services, uniqueName } from './services.js';

/** Polls `condition` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(condition: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? ` (last error: ${last.message})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A TCP port nothing listens on (taken from the OS, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** An admin connection for stream set-up and reading. */
export interface NatsAdmin {
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  close(): Promise<void>;
}

export async function natsAdmin(options: NodeConnectionOptions = { servers: services.natsUrl }): Promise<NatsAdmin> {
  const nc = await connect(options);
  const jsm = await jetstreamManager(nc);
  return { nc, jsm, close: () => nc.close() };
}

/** Creates a stream capturing `<prefix>.>` and returns its name. */
export async function addStream(admin: NatsAdmin, prefix: string, config: Partial<StreamConfig> = {}): Promise<string> {
  const name = uniqueName('s');
  await admin.jsm.streams.add({ ...config, name, subjects: [`${prefix}.>`] });
  return name;
}

/** Everything a stream holds, rebuilt as a consumer in any language reads it. */
export async function readStream(admin: NatsAdmin, stream: string): Promise<ReceivedMessage[]> {
  const info = await admin.jsm.streams.info(stream);
  const total = info.state.messages;
  const received: ReceivedMessage[] = [];
  if (total === 0) return received;
  const consumer = await jetstream(admin.nc).consumers.get(stream);
  while (received.length < total) {
    const batch = await consumer.fetch({ max_messages: total - received.length, expires: 5000 });
    const before = received.length;
    for await (const m of batch) {
      // Header values are percent-encoded on the wire (docs/publishers/nats.md): a consumer decodes them.
      const headers: Record<string, string> = {};
      for (const [name, values] of m.headers ?? []) headers[name] = decodeHeaderValue(values[0] ?? '');
      const key = headers['Outbox-Key'] ?? null;
      received.push({
        id: headers['Nats-Msg-Id'] ?? headers['Outbox-Id'] ?? '',
        topic: m.subject,
        type: headers['Outbox-Type'] ?? '',
        key,
        headers,
        body: m.string(),
        bytes: m.data,
        contentType: headers['Content-Type'],
      });
    }
    if (received.length === before) throw new Error(`stream ${stream} holds ${total} messages but a fetch returned none`);
  }
  return received;
}

/** Waits until the stream holds at least `count` messages, then reads them all. */
export async function waitForStream(admin: NatsAdmin, stream: string, count: number, timeoutMs = 10_000): Promise<ReceivedMessage[]> {
  await eventually(async () => (await admin.jsm.streams.info(stream)).state.messages >= count, timeoutMs, `${count} messages in stream ${stream}`);
  return readStream(admin, stream);
}

/** A logger that keeps every line as JSON text, to search for secrets. */
export function recordingLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, message: string) => {
    lines.push(JSON.stringify({ level, message, ...fields }));
  };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export const natsHarness: PublisherHarness = {
  name: 'NATS JetStream',
  async setup() {
    const admin = await natsAdmin();
    const prefix = uniqueName('p');
    const stream = await addStream(admin, prefix);
    const publisher = createNatsPublisher({ servers: services.natsUrl, publishTimeoutMs: 5000, connectTimeoutMs: 3000, name: 'outboxer-conformance' });
    return {
      publisher,
      topic: (suffix) => `${prefix}.${suffix}`,
      unroutableTopic: `${uniqueName('nostream')}.x`,
      waitForMessages: (count, timeoutMs) => waitForStream(admin, stream, count, timeoutMs),
      async cleanup() {
        await publisher.close();
        await admin.jsm.streams.delete(stream);
        await admin.close();
      },
    };
  },
  async unreachable(secret) {
    const port = await freePort();
    return createNatsPublisher({ servers: `nats://user:${secret}@127.0.0.1:${port}`, publishTimeoutMs: 2000, connectTimeoutMs: 1000 });
  },
};

/** Publishers made in a test, closed in its cleanup. */
export function publisherPool(): { make(options: NatsPublisherOptions): Publisher; closeAll(): Promise<void> } {
  const made: Publisher[] = [];
  return {
    make(options) {
      const publisher = createNatsPublisher(options);
      made.push(publisher);
      return publisher;
    },
    async closeAll() {
      await Promise.all(made.splice(0).map((p) => p.close()));
    },
  };
}

/**
 * A private nats-server with JetStream on its own port and store directory, that a test may freeze,
 * kill and restart without disturbing the shared server other suites use.
 */
export class PrivateNatsServer {
  #process: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    readonly monitorPort: number,
    readonly storeDir: string,
    /** Credentials the server requires (change them between kill and start to lock clients out). */
    public auth: { user: string; pass: string } | undefined,
  ) {}

  static async create(auth?: { user: string; pass: string }): Promise<PrivateNatsServer> {
    const storeDir = await mkdtemp(join(tmpdir(), 'outboxer-nats-'));
    return new PrivateNatsServer(await freePort(), await freePort(), storeDir, auth);
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  adminOptions(): NodeConnectionOptions {
    return { servers: this.url, ...(this.auth ?? {}), reconnect: false };
  }

  /** Starts the server and waits until JetStream answers. */
  async start(): Promise<void> {
    const args = ['-a', '127.0.0.1', '-p', String(this.port), '-m', String(this.monitorPort), '-js', '-sd', this.storeDir];
    if (this.auth !== undefined) args.push('--user', this.auth.user, '--pass', this.auth.pass);
    const child = spawn('/usr/sbin/nats-server', args, { stdio: 'ignore' });
    this.#process = child;
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}`);
        const admin = await natsAdmin(this.adminOptions());
        await admin.close();
        return true;
      },
      15_000,
      `private nats-server on port ${this.port}`,
    );
  }

  /** SIGSTOP, waiting until every thread is stopped: the process keeps its sockets open but answers nothing. */
  async freeze(): Promise<void> {
    const pid = this.#process?.pid;
    if (pid === undefined) throw new Error('the private nats-server is not running');
    this.#process?.kill('SIGSTOP');
    await eventually(
      async () => {
        const tasks = await readdir(`/proc/${pid}/task`);
        const states = await Promise.all(tasks.map(async (task) => (await readFile(`/proc/${pid}/task/${task}/stat`, 'utf8')).replace(/^.*\) /s, '')[0]));
        return states.every((state) => state === 'T' || state === 't');
      },
      5000,
      'the private nats-server to stop',
    );
  }

  thaw(): void {
    this.#process?.kill('SIGCONT');
  }

  /** SIGKILL, waiting for the process to be gone. */
  async kill(): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }

  /** The server's view of client connections (monitoring endpoint). */
  async connections(): Promise<{ name?: string }[]> {
    const response = await fetch(`http://127.0.0.1:${this.monitorPort}/connz`);
    const body = (await response.json()) as { connections?: { name?: string }[] };
    return body.connections ?? [];
  }

  async destroy(): Promise<void> {
    await this.kill();
    await rm(this.storeDir, { recursive: true, force: true });
  }
}
