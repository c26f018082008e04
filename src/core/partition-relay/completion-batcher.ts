import type { CompletionOutcome, PartitionCompletion } from '../ports.js';

interface Pending {
  readonly relayId: string;
  readonly completion: PartitionCompletion;
  resolve(outcome: CompletionOutcome): void;
  reject(error: unknown): void;
}

export type CompletionWriter = (relayId: string, completions: readonly PartitionCompletion[]) => Promise<readonly CompletionOutcome[]>;

/**
 * Gathers the completions of many partitions into one fenced statement: a completion waits `delayMs` for others,
 * and those that arrive while a write is in flight go together in the next. Completions of different relay ids
 * (a rejoin while old work finishes) go in separate statements, each under its own id.
 */
export class CompletionBatcher {
  readonly #write: CompletionWriter;
  readonly #delayMs: number;
  #queue: Pending[] = [];
  #scheduled = false;

  constructor(write: CompletionWriter, delayMs: number) {
    this.#write = write;
    this.#delayMs = delayMs;
  }

  /** Resolves with the partition's outcome once the statement that carried it committed. */
  complete(relayId: string, completion: PartitionCompletion): Promise<CompletionOutcome> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ relayId, completion, resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      setTimeout(() => void this.#flush(), this.#delayMs);
    });
  }

  async #flush(): Promise<void> {
    while (this.#queue.length > 0) {
      const relayId = (this.#queue[0] as Pending).relayId;
      const batch = this.#queue.filter((p) => p.relayId === relayId);
      this.#queue = this.#queue.filter((p) => p.relayId !== relayId);
      try {
        const outcomes = await this.#write(
          relayId,
          batch.map((p) => p.completion),
        );
        for (const p of batch) {
          const outcome = outcomes.find((o) => o.partition === p.completion.partition && o.epoch === p.completion.epoch);
          if (outcome === undefined)
            p.reject(new Error(`the store returned no outcome for partition ${p.completion.partition} at epoch ${p.completion.epoch}`));
          else p.resolve(outcome);
        }
      } catch (error) {
        for (const p of batch) p.reject(error);
      }
    }
    this.#scheduled = false;
  }
}
