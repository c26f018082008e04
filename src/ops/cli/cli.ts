import { parseCommandLine } from './args.js';
import type { CommandName } from './command-names.js';
import { deadListCommand, deadMutationCommand } from './commands/dead.js';
import { pendingDeleteCommand, pendingListCommand, pendingShowCommand } from './commands/pending.js';
import { relayCommand } from './commands/relay.js';
import { migrateCommand, sqlCommand } from './commands/schema.js';
import { statusCommand } from './commands/status.js';
import { destinationPauseCommand, destinationResumeCommand, destinationsListCommand } from './commands/destinations.js';
import { topicPauseCommand, topicResumeCommand, topicsListCommand } from './commands/topics.js';
import { type CliConfig, resolveConfig } from './config.js';
import { dialectOf, targetOf } from './database.js';
import { describeFailure, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, isUsageError, TargetedFailure, UsageError } from './errors.js';
import { helpText, usageAfterError } from './help.js';
import type { CliIo } from './io.js';
import { packageVersion } from '../http/package-version.js';

export { packageVersion };

async function dispatch(command: CommandName, config: CliConfig, io: CliIo): Promise<number> {
  switch (command) {
    case 'sql':
      return sqlCommand(config, io);
    case 'migrate':
      return migrateCommand(config, io);
    case 'status':
      return statusCommand(config, io);
    case 'relay':
      return relayCommand(config, io, packageVersion());
    case 'dead list':
      return deadListCommand(config, io);
    case 'dead retry':
      return deadMutationCommand(config, io, 'retry');
    case 'dead purge':
      return deadMutationCommand(config, io, 'purge');
    case 'topics list':
      return topicsListCommand(config, io);
    case 'topics pause':
      return topicPauseCommand(config, io);
    case 'topics resume':
      return topicResumeCommand(config, io);
    case 'destinations list':
      return destinationsListCommand(config, io);
    case 'destinations pause':
      return destinationPauseCommand(config, io);
    case 'destinations resume':
      return destinationResumeCommand(config, io);
    case 'pending list':
      return pendingListCommand(config, io);
    case 'pending show':
      return pendingShowCommand(config, io);
    case 'pending delete':
      return pendingDeleteCommand(config, io);
  }
}

/**
 * Runs one command line and returns the exit code: 0 ok, 1 runtime failure (one line on stderr,
 * no stack trace, URLs redacted), 2 usage error (the message, then the usage line and where the options are
 * listed, on stderr; an unknown option in one line). Never exits.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let command = 'outboxer';
  let config: CliConfig | undefined;
  try {
    const invocation = parseCommandLine(argv);
    if (invocation.kind === 'version') {
      io.out(`${packageVersion()}\n`);
      return EXIT_OK;
    }
    if (invocation.kind === 'help') {
      io.out(helpText(invocation.topic));
      return EXIT_OK;
    }
    command = invocation.command;
    config = resolveConfig(invocation.command, invocation.values, invocation.operands, io.env);
    return await dispatch(invocation.command, config, io);
  } catch (error) {
    const inner = error instanceof TargetedFailure ? error.cause : error;
    if (isUsageError(inner)) {
      const topic = inner instanceof UsageError ? inner.topic : command === 'outboxer' ? 'main' : (command as UsageError['topic']);
      io.err(`outboxer: ${(inner as Error).message}\n${usageAfterError(topic, inner instanceof UsageError ? inner.shown : 'line')}`);
      return EXIT_USAGE;
    }
    const database = config?.databaseUrl === undefined ? undefined : { what: 'database', urls: [config.databaseUrl] };
    // A database failure gets the stable code (and fix) that the relay's start check gives it.
    const failure = (config?.databaseUrl === undefined ? undefined : await explainedFailure(error, config)) ?? error;
    io.err(`${describeFailure(command, failure, database)}\n`);
    return EXIT_FAILURE;
  }
}

/** The database's own reading of a driver failure, with its stable code and fix; undefined for any other error. */
async function explainedFailure(error: unknown, config: CliConfig): Promise<unknown> {
  const dialect = await dialectOf(config).catch(() => undefined);
  return dialect?.explainFailure(error, targetOf(config));
}
