import type pg from 'pg';
import { resolveRelayOptions, type RelayOptionsInput } from '../../src/index.js';
import type { Engine } from '../config.js';

/** The relay's own default engine: v1 on commits whose relay knows no engine option. */
function defaultEngine(): string {
  return (resolveRelayOptions({}) as { engine?: string }).engine ?? 'v1';
}

/**
 * The bench's `engine` setting, for the table and the relay. A table the bench migrates starts at the engine its
 * commit gives new tables (v2 now, v1 on older commits); it is set to the one asked for at once, with no fence
 * to wait for, since no relay serves a bench table yet. The relay option and the CLI flag are passed only when they differ from the
 * relay's default, so the bench still runs on commits whose relay knows no engine option; on those,
 * `engine=v2` fails with the relay's own validation error.
 */
export async function useEngine(admin: pg.Client, schema: string, table: string, engine: Engine): Promise<void> {
  const partitioning = `"${schema}"."${table}_partitioning"`;
  const found = await admin.query<{ exists: boolean }>('SELECT to_regclass($1) IS NOT NULL AS exists', [partitioning]);
  if (found.rows[0]?.exists !== true) throw new Error(`engine ${engine}: ${partitioning} is missing (this commit has no engine v2)`);
  // since schema version 14 the table has no engine column: v2 is the only engine
  const engineColumn = await admin.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'engine' AND NOT attisdropped`,
    [partitioning],
  );
  if (engineColumn.rows[0]?.n === 1) await admin.query(`UPDATE ${partitioning} SET engine = '${engine}', fence_until = '-infinity'`);
  else if (engine !== 'v2') throw new Error(`engine ${String(engine)}: this commit's table runs engine v2 only`);
}

export function engineRelayOptions(engine: Engine): RelayOptionsInput {
  return engine === defaultEngine() ? {} : { engine };
}

export function engineCliFlags(engine: Engine): string[] {
  return engine === defaultEngine() ? [] : ['--engine', engine];
}
