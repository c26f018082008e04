#!/usr/bin/env node
/**
 * The `outboxer` executable: wires the CLI to this process (argv, environment, streams, signals)
 * and is the only place that exits. Everything written goes through a scrubber that replaces the
 * passwords found in the command line and the environment, whatever printed them.
 */
import { setFlagsFromString } from 'node:v8';
import { runCli } from './cli.js';
import { heapGrowthFlag } from './heap-growth.js';
import { collectSecrets, makeScrubber, type CliIo } from './io.js';

// Before any command runs: a relay's old generation is kept at twice its live heap, not V8's four times (heap-growth.ts).
const heapGrowth = heapGrowthFlag(process.execArgv, process.env.NODE_OPTIONS);
if (heapGrowth !== undefined) setFlagsFromString(heapGrowth);

const argv = process.argv.slice(2);
const secrets = collectSecrets(argv, process.env);
const scrubErr = makeScrubber(secrets);
/** Output is data (DDL, JSON): only secrets long enough not to match ordinary words are scrubbed there. */
const scrubOut = makeScrubber(secrets, 8);

function write(stream: NodeJS.WriteStream, text: string): void {
  stream.write(stream === process.stdout ? scrubOut(text) : scrubErr(text));
}

// A reader that went away (`outboxer dead list | head`) is not a failure of ours.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

/** Waits until what was written to a stream has been handed to the OS, so that exit loses nothing. */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) resolve();
    else stream.write('', () => resolve());
  });
}

async function exit(code: number): Promise<never> {
  await Promise.race([Promise.all([flushed(process.stdout), flushed(process.stderr)]), new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
  process.exit(code);
}

function lastResort(kind: string, error: unknown): void {
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : typeof error;
  write(process.stderr, `outboxer: ${kind}: ${detail.replace(/\s+/g, ' ').slice(0, 500)}\n`);
  void exit(1);
}

process.on('uncaughtException', (error) => lastResort('unexpected error', error));
process.on('unhandledRejection', (error) => lastResort('unhandled rejection', error));

const io: CliIo = {
  env: process.env,
  out: (text) => write(process.stdout, text),
  err: (text) => write(process.stderr, text),
  onSignal(handler) {
    const listener = (signal: NodeJS.Signals) => handler(signal);
    process.on('SIGINT', listener);
    process.on('SIGTERM', listener);
    return () => {
      process.off('SIGINT', listener);
      process.off('SIGTERM', listener);
    };
  },
  forceExit: (code) => void exit(code),
};

void exit(await runCli(argv, io));
