import type { Publisher } from '../../src/index.js';
import { ceilingMessage, type Workload } from '../support/workload.js';
import { type CeilingRun, windowed } from './ceiling-window.js';

/**
 * The library's own publisher with no database: the same messages and window as the ceiling. It splits
 * the relay's distance to the ceiling into publisher cost (this row) and database cost (the rest).
 */
export async function publisherOnly(publisher: Publisher, workload: Workload, count: number, window: number): Promise<CeilingRun> {
  try {
    return await windowed(count, window, (n) => publisher.publish(ceilingMessage(n, workload)));
  } finally {
    await publisher.close();
  }
}
