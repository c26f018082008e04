import type { IncomingMessage } from 'node:http';
import { OpsHttpError } from './ops-http-error.js';

/** The largest request body read: 16 KiB, room for 400 ids (39 bytes each as JSON). */
export const MAX_BODY_BYTES = 16 * 1024;

const JSON_TYPE = /^application\/json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/**
 * The JSON body of a request: `Content-Type: application/json` (415 otherwise), at most `limit` bytes (413),
 * counted as they arrive, so a chunked body or a `Content-Length` that understates is cut off at the limit
 * rather than buffered; UTF-8 and valid JSON (400).
 */
export async function readJsonBody(request: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  if (!JSON_TYPE.test(request.headers['content-type'] ?? '')) {
    throw new OpsHttpError(415, 'OUTBOXER_UNSUPPORTED_MEDIA_TYPE', 'the body must be JSON, sent with Content-Type: application/json');
  }
  const declared = request.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  const bytes = await collect(request, limit);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new OpsHttpError(400, 'OUTBOXER_INVALID_JSON', 'the body is not UTF-8');
  }
  if (text.trim() === '') throw new OpsHttpError(400, 'OUTBOXER_INVALID_JSON', 'the body is empty; this endpoint takes a JSON object');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new OpsHttpError(400, 'OUTBOXER_INVALID_JSON', 'the body is not valid JSON');
  }
}

function tooLarge(limit: number): OpsHttpError {
  return new OpsHttpError(413, 'OUTBOXER_BODY_TOO_LARGE', `the body is larger than ${limit} bytes`);
}

/** Reads the body up to `limit` bytes; past it, stops listening and rejects (the server then closes the connection). */
function collect(request: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error?: Error) => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('close', onClose);
      if (error === undefined) resolve(Buffer.concat(chunks, size));
      else reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.pause();
        finish(tooLarge(limit));
      } else chunks.push(chunk);
    };
    const onEnd = () => finish();
    const onError = (error: Error) => finish(error);
    const onClose = () => {
      if (!request.complete) finish(new Error('the client closed the connection before its body ended'));
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('close', onClose);
  });
}
