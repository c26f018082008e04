import { Socket } from 'node:net';
import type { ChannelModel } from 'amqplib';

/**
 * Gathers what amqplib writes in one turn of the event loop into one socket write. The publisher's socket runs
 * without Nagle's delay (`noDelay`, so that a lone publish leaves at once), and amqplib's multiplexer writes frame by
 * frame: every publish was a system call and a TCP segment of its own, and in a drain those writes cost the relay's
 * process 4.5 times what the same messages cost an amqplib client with Nagle's delay (bench (l), CPU profile).
 *
 * Call it before each publish: the first call of a turn corks the socket, and the socket is uncorked one turn later,
 * after amqplib's multiplexer, which writes in a `setImmediate` of its own, has handed over that turn's frames; they
 * then leave in one `writev`. A publish waits one turn of the loop at most. A corked socket still refuses more than
 * its high-water mark (16 KiB on Node 20), and the multiplexer then waits for 'drain' and writes the rest from its
 * listener: the socket is corked just before that listener runs and uncorked just after it, so what it writes leaves
 * at once, in one `writev` (a burst of large messages is not held back a turn per message). Returns a function that does
 * nothing when the installed amqplib does not keep its socket where this looks for it (`connection.stream`): nothing
 * is gathered then, and nothing else changes.
 */
export function writeCoalescer(model: ChannelModel): () => void {
  const socket = socketOf(model);
  if (socket === undefined) return () => undefined;
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  // amqplib's multiplexer listens to 'drain' from its start: these two run just before and just after it
  socket.prependListener('drain', () => socket.cork());
  socket.on('drain', () => socket.uncork());
  return () => {
    if (corked) return;
    corked = true;
    socket.cork();
    setImmediate(() => setImmediate(uncork));
  };
}

/** amqplib's socket (a TLS socket for `amqps:` is one too), when it is where amqplib 2.x keeps it. */
export function socketOf(model: ChannelModel): Socket | undefined {
  const stream: unknown = (model.connection as unknown as { readonly stream?: unknown }).stream;
  return stream instanceof Socket ? stream : undefined;
}
