import { describe, expect, it } from 'vitest';
import { PublishWindow } from '../../src/core/publish-window.js';

describe('PublishWindow', () => {
  it('grants up to its size at once, then one permit per release', async () => {
    const window = new PublishWindow(2);
    const permits = window.permits(0);
    await permits.acquire();
    await permits.acquire();
    let granted = false;
    const third = permits.acquire().then(() => (granted = true));
    await Promise.resolve();
    expect(granted).toBe(false);
    permits.release();
    await third;
    expect(granted).toBe(true);
  });

  it('serves the oldest batch first, then arrival order within a batch', async () => {
    const window = new PublishWindow(1);
    await window.permits(5).acquire();
    const order: string[] = [];
    const waits = [
      window
        .permits(7)
        .acquire()
        .then(() => order.push('7a')),
      window
        .permits(6)
        .acquire()
        .then(() => order.push('6a')),
      window
        .permits(7)
        .acquire()
        .then(() => order.push('7b')),
      window
        .permits(6)
        .acquire()
        .then(() => order.push('6b')),
    ];
    for (let i = 0; i < 4; i++) {
      window.permits(0).release();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(waits);
    expect(order).toEqual(['6a', '6b', '7a', '7b']);
  });
});
