import type pg from 'pg';
import type { RelayOptionsInput } from '../../src/index.js';
import type { Engine } from '../config.js';

/**
 * The bench's `engine` setting. A new table starts on engine v1 (migration 6's default); v2 switches it at
 * once, with no fence to wait for, since no v1 relay serves a bench table. The relay option and the CLI flag
 * are passed only for v2, so the bench still runs on commits whose relay knows no engine option; on those,
 * `engine=v2` fails with the relay's own validation error.
 */
export async function useEngine(admin: pg.Client, schema: string, table: string, engine: Engine): Promise<void> {
  if (engine === 'v1') return;
  await admin.query(`UPDATE "${schema}"."${table}_partitioning" SET engine = '${engine}', fence_until = '-infinity'`);
}

export function engineRelayOptions(engine: Engine): RelayOptionsInput {
  return engine === 'v1' ? {} : ({ engine } as RelayOptionsInput);
}

export function engineCliFlags(engine: Engine): string[] {
  return engine === 'v1' ? [] : ['--engine', engine];
}
