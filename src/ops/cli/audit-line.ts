import { userInfo } from 'node:os';
import { createJsonLogger } from '../../core/logger.js';
import { redactUrl } from '../../core/redact.js';
import type { CliConfig } from './config.js';
import type { CliIo } from './io.js';

/**
 * Writes one change an operator made as a JSON line on stderr, whatever `--log-level` says: who (the
 * operating-system user), what (`action` and `fields`), on which table, and the database with its URL redacted.
 */
export function writeAuditLine(config: CliConfig, io: CliIo, action: string, fields: Readonly<Record<string, unknown>>, message: string): void {
  createJsonLogger('info', io.err).info(
    {
      audit: true,
      user: operatingSystemUser(io.env),
      action,
      table: `${config.schema}.${config.table}`,
      database: redactUrl(config.databaseUrl ?? ''),
      ...fields,
    },
    message,
  );
}

/** Who ran it; containers may have a uid without a passwd entry. */
function operatingSystemUser(env: CliIo['env']): string {
  try {
    return userInfo().username;
  } catch {
    const uid = typeof process.getuid === 'function' ? `uid ${process.getuid()}` : 'unknown';
    return env.USER ?? env.LOGNAME ?? uid;
  }
}
