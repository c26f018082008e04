import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Waker } from '../../src/core/waker.js';

/** Tracks whether a promise has settled, without awaiting it. */
function track(promise: Promise<void>): { readonly done: boolean } {
  const state = { done: false };
  void promise.then(() => {
    state.done = true;
  });
  return state;
}

describe('Waker', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('resolves when the wait runs out, not before', async () => {
    const waker = new Waker();
    const wait = track(waker.wait(1000));
    await vi.advanceTimersByTimeAsync(999);
    expect(wait.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(wait.done).toBe(true);
  });

  it('wake() during a wait resolves it at once and clears its timer', async () => {
    const waker = new Waker();
    const wait = track(waker.wait(60_000));
    await vi.advanceTimersByTimeAsync(10);
    expect(wait.done).toBe(false);
    expect(vi.getTimerCount()).toBe(1);
    waker.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(wait.done).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('does not lose a wake that comes before the wait', async () => {
    const waker = new Waker();
    waker.wake();
    const wait = track(waker.wait(60_000));
    await vi.advanceTimersByTimeAsync(0);
    expect(wait.done).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('uses up a stored wake: the next wait sleeps its full time', async () => {
    const waker = new Waker();
    waker.wake();
    waker.wake(); // wakes do not pile up
    await waker.wait(60_000);
    const second = track(waker.wait(500));
    await vi.advanceTimersByTimeAsync(499);
    expect(second.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(second.done).toBe(true);
  });

  it('a wake that resolved a wait is not stored for the next one', async () => {
    const waker = new Waker();
    const first = track(waker.wait(60_000));
    waker.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(first.done).toBe(true);
    const second = track(waker.wait(1000));
    await vi.advanceTimersByTimeAsync(999);
    expect(second.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(second.done).toBe(true);
  });

  it('a wait that timed out leaves no pending waiter: a later wake is kept for the next wait', async () => {
    const waker = new Waker();
    await Promise.all([waker.wait(100), vi.advanceTimersByTimeAsync(100)]);
    waker.wake();
    const next = track(waker.wait(60_000));
    await vi.advanceTimersByTimeAsync(0);
    expect(next.done).toBe(true);
  });

  it('can be woken many times in a row, one wait after another', async () => {
    const waker = new Waker();
    for (let i = 0; i < 5; i++) {
      const wait = track(waker.wait(60_000));
      await vi.advanceTimersByTimeAsync(1);
      expect(wait.done).toBe(false);
      waker.wake();
      await vi.advanceTimersByTimeAsync(0);
      expect(wait.done).toBe(true);
    }
    expect(vi.getTimerCount()).toBe(0);
  });
});
