import { createServer, type Server, type Socket, connect } from 'node:net';

export type ProxyMode = 'forward' | 'refuse' | 'blackhole';

/**
 * A TCP proxy on loopback between a client under test and a real service, for fault injection
 * that touches only that client: refuse (reset new and existing connections), black-hole (accept,
 * never answer), added latency, or a reset of every open connection.
 */
export class TcpProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #mode: ProxyMode = 'forward';
  #latencyMs = 0;
  port = 0;

  private constructor(
    private readonly targetPort: number,
    private readonly targetHost: string,
  ) {
    this.#server = createServer((client) => this.#accept(client));
  }

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetPort, targetHost);
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    const address = proxy.#server.address();
    proxy.port = typeof address === 'object' && address !== null ? address.port : 0;
    return proxy;
  }

  get openConnections(): number {
    return this.#sockets.size;
  }

  /** Switches mode; leaving `forward` drops every open connection (refuse) or freezes it (blackhole). */
  setMode(mode: ProxyMode): void {
    this.#mode = mode;
    if (mode === 'refuse') this.resetAll();
  }

  setLatency(ms: number): void {
    this.#latencyMs = ms;
  }

  /** Resets every open connection, as a network failure would. */
  resetAll(): void {
    for (const socket of this.#sockets) socket.resetAndDestroy();
    this.#sockets.clear();
  }

  async close(): Promise<void> {
    this.resetAll();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: Socket): void {
    if (this.#mode === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    this.#track(client);
    if (this.#mode === 'blackhole') {
      client.on('error', () => undefined);
      return;
    }
    const upstream = connect(this.targetPort, this.targetHost);
    this.#track(upstream);
    this.#pipe(client, upstream);
    this.#pipe(upstream, client);
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', closeBoth);
    upstream.on('close', closeBoth);
    client.on('error', closeBoth);
    upstream.on('error', closeBoth);
  }

  /**
   * Forwards in order, as a real network does for one TCP stream: a chunk never overtakes one still delayed, also
   * when the latency drops (once, chunks sent after a latency fault ended overtook the delayed ones and reordered
   * the AMQP frames, which the chaos checker saw as publishes out of key order).
   */
  #pipe(from: Socket, to: Socket): void {
    const queue: { readonly chunk: Buffer; readonly releaseAt: number }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const pump = () => {
      timer = undefined;
      const now = performance.now();
      while (queue.length > 0 && (queue[0]?.releaseAt ?? 0) <= now) {
        const next = queue.shift();
        if (next !== undefined && to.writable) to.write(next.chunk);
      }
      const head = queue[0];
      if (head !== undefined) timer = setTimeout(pump, Math.max(0, head.releaseAt - now));
    };
    from.on('data', (chunk: Buffer) => {
      if (this.#mode === 'blackhole') return;
      const now = performance.now();
      const releaseAt = Math.max(now + this.#latencyMs, queue.at(-1)?.releaseAt ?? 0);
      if (queue.length === 0 && releaseAt <= now) {
        to.write(chunk);
        return;
      }
      queue.push({ chunk, releaseAt });
      timer ??= setTimeout(pump, Math.max(0, (queue[0]?.releaseAt ?? now) - now));
    });
    from.on('close', () => clearTimeout(timer));
  }

  #track(socket: Socket): void {
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
  }
}
