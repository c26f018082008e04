import { OpsHttpError } from './ops-http-error.js';

/** The path and raw query of a request, as sent: nothing decoded, nothing normalized. */
export interface RequestTarget {
  readonly path: string;
  /** After the `?`, without it; '' when there is none. */
  readonly query: string;
}

/** Longest request target served; anything longer is no endpoint of ours. */
const MAX_TARGET_LENGTH = 2048;
/** Segments of unreserved characters only: no `%` escape, `\`, `;`, empty segment (`//`) or anything a decoder could turn into a `/`. */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9._~-]+)*\/?$/;
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

/**
 * Reads the request target deterministically, without ever normalizing it: a path is served only when it is
 * plain (unreserved characters, no dot segment, no empty segment, no percent-escape) and then matched byte for
 * byte, so `/api/../metrics`, `//api/stats`, `/api%2Fstats` and `/api/%2e%2e/metrics` are refused (400) rather
 * than resolved to another endpoint. The absolute form (`http://host/path`, which HTTP/1.1 servers must
 * accept) is read as its path and query; its host plays no part.
 */
export function parseRequestTarget(raw: string): RequestTarget {
  if (raw.length > MAX_TARGET_LENGTH) throw badTarget(`the request target is longer than ${MAX_TARGET_LENGTH} characters`);
  let target = raw;
  if (!target.startsWith('/')) {
    const authority = ABSOLUTE_FORM.exec(target)?.[0];
    if (authority === undefined) throw badTarget('the request target must be a path (origin form) or an http URL (absolute form)');
    target = target.slice(authority.length);
    if (!target.startsWith('/')) target = `/${target}`;
  }
  if (target.includes('#')) throw badTarget('the request target must not carry a fragment');
  const mark = target.indexOf('?');
  const path = mark < 0 ? target : target.slice(0, mark);
  const query = mark < 0 ? '' : target.slice(mark + 1);
  if (!PLAIN_PATH.test(path) || path.split('/').some((segment) => segment === '.' || segment === '..')) {
    throw new OpsHttpError(
      400,
      'OUTBOXER_INVALID_PATH',
      'the path must be plain: letters, digits and -._~ between single slashes, no dot segments and no percent-escapes',
    );
  }
  return { path, query };
}

function badTarget(message: string): OpsHttpError {
  return new OpsHttpError(400, 'OUTBOXER_BAD_REQUEST_TARGET', message);
}
