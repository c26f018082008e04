import { ConfigurationError } from '../../../core/errors.js';
import { createJsonLogger } from '../../../core/logger.js';
import type { TopicPause } from '../../../core/ports.js';
import { writeAuditLine } from '../audit-line.js';
import type { CliConfig } from '../config.js';
import { openOperatorStore, type OperatorStore } from '../database.js';
import { CliFailure, EXIT_OK, tableNotMigrated, UsageError } from '../errors.js';
import { printable } from '../format.js';
import type { CliIo } from '../io.js';
import { isMissingTable, pausesJson, pausesText, readPauses } from './paused-topic-list.js';

/** A topic and a reason are bounded by the store (255 and 500 bytes): shown whole. */
const SHOWN_MAX_LENGTH = 600;

/**
 * Runs `work` on a one-connection operator store. The store's refusals keep their code: a bad input or the most
 * pauses a table allows is a usage error (exit 2); a table without migration 9 says to migrate.
 */
async function withOperatorStore<T>(config: CliConfig, io: CliIo, work: (store: OperatorStore) => Promise<T>): Promise<T> {
  const store = await openOperatorStore(config, createJsonLogger(config.logLevel, io.err));
  try {
    return await work(store);
  } catch (error) {
    if (error instanceof ConfigurationError) throw new UsageError(`${error.code}: ${error.message}`, config.command);
    if (isMissingTable(error)) {
      throw tableNotMigrated(config, 'it has no list of paused topics: schema version 9 adds it');
    }
    throw error;
  } finally {
    await store.close();
  }
}

function requiredTopic(config: CliConfig): string {
  if (config.topic === undefined) throw new CliFailure('OUTBOXER_INVALID_OPTION', `'${config.command}' needs a topic`);
  return config.topic;
}

/**
 * `outboxer topics list [--json]`: the topics operators paused (oldest pause first), then those the relays hold by
 * themselves because their destination is missing (earliest first, read from their held rows).
 */
export async function topicsListCommand(config: CliConfig, io: CliIo): Promise<number> {
  const listing = await withOperatorStore(config, io, (store) => readPauses(store));
  if (config.json) {
    io.out(`${JSON.stringify(pausesJson(listing.pauses), null, 2)}\n`);
    return EXIT_OK;
  }
  if (listing.pauses.length === 0) {
    io.out(`no paused topics in ${config.schema}.${config.table}\n`);
    return EXIT_OK;
  }
  io.out(pausesText(listing, `${config.schema}.${config.table}`));
  return EXIT_OK;
}

/** `outboxer topics pause <topic> [--reason <text>]`: pauses it for every relay of the table; exit 0 if it was paused already. */
export async function topicPauseCommand(config: CliConfig, io: CliIo): Promise<number> {
  const topic = requiredTopic(config);
  const { paused, existing } = await withOperatorStore(config, io, async (store) => {
    const inserted = await store.pauseTopic(topic, config.reason);
    const found: TopicPause | undefined = inserted ? undefined : (await store.pausedTopics()).find((pause) => pause.topic === topic);
    return { paused: inserted, existing: found };
  });
  writeAuditLine(config, io, 'topics.pause', { topic, reason: config.reason, changed: paused ? 1 : 0 }, paused ? 'topic paused' : 'topic was paused already');
  if (paused) {
    io.out(`topic ${topic} paused for every relay (relays hold its messages within about 5 s)\n`);
  } else if (existing === undefined) {
    // resumed between the pause and the read of the list
    io.out(`topic ${topic} was already paused\n`);
  } else {
    const why = existing.reason === '' ? '' : `: ${printable(existing.reason, SHOWN_MAX_LENGTH)}`;
    io.out(`topic ${topic} was already paused since ${existing.pausedAt.toISOString()}${why}\n`);
  }
  return EXIT_OK;
}

/** `outboxer topics resume <topic>`: ends the pause; exit 0 if it was not paused. */
export async function topicResumeCommand(config: CliConfig, io: CliIo): Promise<number> {
  const topic = requiredTopic(config);
  const resumed = await withOperatorStore(config, io, (store) => store.resumeTopic(topic));
  writeAuditLine(config, io, 'topics.resume', { topic, changed: resumed ? 1 : 0 }, resumed ? 'topic resumed' : 'topic was not paused');
  io.out(
    resumed
      ? `topic ${topic} resumed: its held messages publish as their holds run out (docs/design/failures-and-pauses.md, Operator pauses)\n`
      : `topic ${topic} was not paused\n`,
  );
  return EXIT_OK;
}
