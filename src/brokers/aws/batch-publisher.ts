import { PublishError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import type { OutboxMessage } from '../../core/message.js';
import type { Publisher } from '../../core/ports.js';
import { type AwsCallContext, entryFailure, type FailedEntry, toPublishError } from './errors.js';
import { MicroBatcher } from './micro-batcher.js';
import type { ResolvedAwsCommonOptions } from './options.js';
import { type AwsWireMessage, toAwsWire, tooLarge } from './wire.js';

/** An entry of one batch request: `entryId` is unique within the request. */
export interface BatchRequestEntry {
  readonly entryId: string;
  readonly wire: AwsWireMessage;
}

/** What SendMessageBatch and PublishBatch both answer with HTTP 200. */
export interface BatchAnswer {
  readonly Successful?: readonly { readonly Id?: string | undefined }[] | undefined;
  readonly Failed?: readonly (FailedEntry & { readonly Id?: string | undefined })[] | undefined;
}

/** What differs between SQS and SNS: the client calls and how a topic finds its destination. */
export interface AwsService {
  readonly name: 'sqs' | 'sns';
  /** `SQS` or `SNS`, for messages. */
  readonly service: string;
  readonly kind: 'queue' | 'topic';
  /** The queue URL or topic ARN of a message, or a PublishError (no route, a topic that is no queue name). */
  destinationOf(message: OutboxMessage): string;
  isFifo(destination: string): boolean;
  /** One batch request; rejects with what the SDK threw. */
  request(destination: string, entries: readonly BatchRequestEntry[], signal: AbortSignal): Promise<BatchAnswer>;
  /** The start check: a cheap call that proves the endpoint answers and the credentials work. */
  readonly probeTarget: string;
  probe(signal: AbortSignal): Promise<void>;
  destroy(): void;
}

/**
 * The publisher port over a batch API: publishes to one destination within `batchWindowMs` share a request,
 * and each publish resolves only once its own entry is listed as Successful (stored by the service).
 */
export function createAwsBatchPublisher(service: AwsService, options: ResolvedAwsCommonOptions & { readonly maxMessageBytes: number }): Publisher {
  const logger = options.logger ?? silentLogger;
  const { publishTimeoutMs, maxMessageBytes } = options;
  const capabilities = Object.freeze({ maxMessageBytes });
  const inFlight = new Set<Promise<void>>();
  let closed = false;
  let closing: Promise<void> | undefined;

  const context = (what: string, destination: string): AwsCallContext => ({
    service: service.service,
    kind: service.kind,
    what,
    destination,
    timeoutMs: publishTimeoutMs,
    secrets: options.secrets,
  });
  const closedError = (): PublishError => new PublishError('OUTBOXER_CLOSED', `the ${service.service} publisher is closed`);

  async function sendOnce(destination: string, wires: readonly AwsWireMessage[]): Promise<(Error | undefined)[]> {
    const entries = wires.map((wire, index) => ({ entryId: `m${index}`, wire }));
    const what = wires.length === 1 ? `message ${wires[0]?.id ?? ''}` : `messages ${wires.map((wire) => wire.id).join(', ')}`;
    let answer: BatchAnswer;
    try {
      answer = await service.request(destination, entries, AbortSignal.timeout(publishTimeoutMs));
    } catch (error) {
      throw toPublishError(error, context(what, destination));
    }
    const stored = new Set((answer.Successful ?? []).map((entry) => entry.Id));
    const failed = new Map((answer.Failed ?? []).map((entry) => [entry.Id, entry]));
    return entries.map(({ entryId, wire }) => {
      if (stored.has(entryId)) return undefined;
      const failure = failed.get(entryId) ?? {
        Code: 'NoOutcome',
        SenderFault: false,
        Message: 'the answer listed the entry neither as Successful nor as Failed',
      };
      return entryFailure(failure, context(`message ${wire.id}`, destination));
    });
  }

  const batcher = new MicroBatcher<AwsWireMessage>({
    windowMs: options.batchWindowMs,
    maxEntries: options.maxBatchSize,
    maxBytes: maxMessageBytes,
    async send(destination, wires) {
      try {
        return await sendOnce(destination, wires);
      } catch (error) {
        // A request refused as a whole for what one entry holds: each entry alone, so only the faulty one fails for good.
        if (wires.length < 2 || !(error instanceof PublishError) || !error.permanent) throw error;
        return Promise.all(
          wires.map((wire) =>
            sendOnce(destination, [wire]).then(
              ([outcome]) => outcome,
              (single: unknown) => single as Error,
            ),
          ),
        );
      }
    },
  });

  /** Never past the publish timeout, even if the SDK ignores its abort signal (a backoff between its retries). */
  async function withinDeadline(sending: Promise<void>, id: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const guard = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new PublishError(
              'OUTBOXER_PUBLISH_TIMEOUT',
              `no answer from ${service.service} for message ${id} within ${publishTimeoutMs} ms; it may have been stored anyway`,
            ),
          ),
        publishTimeoutMs + options.batchWindowMs + 1000,
      );
    });
    sending.catch(() => undefined);
    try {
      await Promise.race([sending, guard]);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    name: service.name,
    capabilities,
    async publish(message: OutboxMessage): Promise<void> {
      if (closed) throw closedError();
      const destination = service.destinationOf(message);
      const wire = toAwsWire(message, { service: service.service, fifo: service.isFifo(destination), nullKeyGroupId: options.nullKeyGroupId });
      if (wire.bytes > maxMessageBytes) throw tooLarge(message, service.service, wire.bytes, maxMessageBytes);
      const publishing = withinDeadline(batcher.add(destination, wire, wire.bytes), message.id);
      inFlight.add(publishing);
      try {
        await publishing;
      } finally {
        inFlight.delete(publishing);
      }
    },
    async verify(): Promise<void> {
      if (closed) throw closedError();
      try {
        await service.probe(AbortSignal.timeout(publishTimeoutMs));
      } catch (error) {
        throw toPublishError(error, context('the start check', service.probeTarget));
      }
    },
    close(): Promise<void> {
      if (closing !== undefined) return closing;
      closed = true;
      closing = (async () => {
        // Publishes already accepted are sent and answered (each bounded by publishTimeoutMs); new ones are refused.
        await batcher.drain();
        await Promise.allSettled([...inFlight]);
        service.destroy();
        logger.info({ publisher: service.name }, `${service.name} publisher closed`);
      })();
      return closing;
    },
  };
}
