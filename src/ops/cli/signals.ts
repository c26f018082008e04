import type { Logger } from '../../core/ports.js';
import type { CliIo } from './io.js';

export interface StopSignal {
  /** Resolves with the name of the first SIGINT/SIGTERM. */
  readonly requested: Promise<string>;
  readonly isRequested: () => boolean;
  /** Stops listening. */
  dispose(): void;
}

/**
 * The first SIGINT/SIGTERM asks for a graceful stop; a second one gives up on it and forces exit 1
 * (for an operator who cannot wait for the in-flight batch).
 */
export function watchStopSignals(io: CliIo, logger: Logger): StopSignal {
  let first: string | undefined;
  let resolve: (signal: string) => void = () => undefined;
  const requested = new Promise<string>((done) => {
    resolve = done;
  });
  const unsubscribe = io.onSignal((signal) => {
    if (first === undefined) {
      first = signal;
      logger.info({ signal }, 'stop requested; finishing the in-flight batch (send the signal again to force exit)');
      resolve(signal);
      return;
    }
    logger.error({ signal, first }, 'second signal: forcing exit without a graceful stop; leased messages return after their lease');
    io.forceExit(1);
  });
  return {
    requested,
    isRequested: () => first !== undefined,
    dispose: unsubscribe,
  };
}
