import { createServer, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

describe('the test TCP proxy', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  it('keeps a stream in order when its latency drops while chunks are still delayed', async () => {
    let received = '';
    const sockets: Socket[] = [];
    const server = createServer((socket) => {
      sockets.push(socket);
      socket.on('data', (chunk) => (received += chunk.toString()));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(
      () =>
        new Promise((resolve) => {
          for (const s of sockets) s.destroy();
          server.close(() => resolve());
        }),
    );
    const address = server.address();
    const proxy = await TcpProxy.start(typeof address === 'object' && address !== null ? address.port : 0);
    closers.push(() => proxy.close());
    const client = connect(proxy.port, '127.0.0.1');
    closers.push(async () => void client.destroy());
    await new Promise<void>((resolve) => client.once('connect', () => resolve()));
    await waitFor(() => sockets.length === 1, { what: 'the proxied connection' });
    proxy.setLatency(300);
    client.write('first,');
    await new Promise((resolve) => setTimeout(resolve, 50));
    proxy.setLatency(0);
    client.write('second');
    await waitFor(() => received.length === 'first,second'.length, { what: 'both chunks through the proxy' });
    expect(received).toBe('first,second');
  });
});
