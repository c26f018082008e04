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

  private constructor(private readonly targetPort: number, private readonly targetHost: string) {
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

  #pipe(from: Socket, to: Socket): void {
    from.on('data', (chunk) => {
      if (this.#mode === 'blackhole') return;
      if (this.#latencyMs === 0) to.write(chunk);
      else setTimeout(() => to.writable && to.write(chunk), this.#latencyMs);
    });
  }

  #track(socket: Socket): void {
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
  }
}
