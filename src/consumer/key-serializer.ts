/**
 * Runs tasks of the same key one after another, in the order they were given, and tasks of different
 * keys (or without a key) side by side. Keeps no entry for a key with nothing queued.
 */
export class KeySerializer {
  readonly #tails = new Map<string, Promise<void>>();

  get activeKeys(): number {
    return this.#tails.size;
  }

  run(key: string | null, task: () => Promise<void>): Promise<void> {
    if (key === null) return task();
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const current = previous.then(task, task);
    const tail = current.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return current;
  }
}
