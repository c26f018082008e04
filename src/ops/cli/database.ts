import type { Logger, OutboxOperator, OutboxSchema } from '../../core/ports.js';
import type { OpenedStore, StoreDialect, StoreTarget } from '../../core/ports/store-dialect.js';
import { dialectEntryOf } from '../../stores/dialects.js';
import type { CliConfig, StoreSettings } from './config.js';
import { CliFailure } from './errors.js';

export type StoreOpenOptions = { readonly max?: number; readonly partitionCount?: number } & Partial<StoreSettings>;

/** The dialect of the configured URL (PostgreSQL's without one, for `sql`), loaded from the registry. */
export function dialectOf(config: CliConfig): Promise<StoreDialect> {
  return dialectEntryOf(config.databaseUrl).load();
}

/** The table the command works on. */
export function targetOf(config: CliConfig): StoreTarget {
  if (config.databaseUrl === undefined) throw new CliFailure('OUTBOXER_INVALID_OPTION', 'no database URL');
  return { url: config.databaseUrl, schema: config.schema, table: config.table };
}

/** Opens the store of the configured URL; closing the store ends every connection the CLI opened for it. */
export async function openStore(config: CliConfig, logger: Logger, options: StoreOpenOptions = {}): Promise<OpenedStore> {
  const target = targetOf(config);
  const { max, partitionCount, ...tuning } = options;
  return (await dialectOf(config)).open(target, {
    logger,
    applicationName: `outboxer ${config.command}`,
    connections: max ?? 2,
    partitionCount,
    tuning,
  });
}

/** What `status` and `dead` use of a store: the operator role, and `close` (the CLI owns the connections). */
export type OperatorStore = OutboxOperator & Pick<OutboxSchema, 'close'>;

/** A store on one connection for the operator commands. */
export async function openOperatorStore(config: CliConfig, logger: Logger): Promise<OperatorStore> {
  return (await openStore(config, logger, { max: 1 })).store;
}
