/** A sleep that ends early when woken: the relay's idle wait between polls. */
export class Waker {
  #pending: (() => void) | undefined;
  #woken = false;

  /** Resolves after `ms`, or at once on `wake()` (a wake before the wait is not lost). */
  wait(ms: number): Promise<void> {
    if (this.#woken) {
      this.#woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.#pending = undefined;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.#pending = finish;
    });
  }

  wake(): void {
    const pending = this.#pending;
    if (pending === undefined) this.#woken = true;
    else {
      this.#woken = false;
      pending();
    }
  }
}
