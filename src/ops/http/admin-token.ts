import { createHash, timingSafeEqual } from 'node:crypto';

/** Shortest admin token accepted: 16 characters (a random one of 32 or more is better: `openssl rand -hex 32`). */
export const MIN_ADMIN_TOKEN_LENGTH = 16;
export const MAX_ADMIN_TOKEN_LENGTH = 1024;
/** Visible ASCII: what fits in `Authorization: Bearer <token>` as sent, with no space to trim or encode. */
const TOKEN_CHARACTERS = /^[\x21-\x7e]+$/;

/** Why a token cannot be used, or undefined when it can. Never quotes the token. */
export function adminTokenProblem(token: string): string | undefined {
  if (token.length < MIN_ADMIN_TOKEN_LENGTH) return `the admin token must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters long (got ${token.length})`;
  if (token.length > MAX_ADMIN_TOKEN_LENGTH) return `the admin token must be at most ${MAX_ADMIN_TOKEN_LENGTH} characters long`;
  if (!TOKEN_CHARACTERS.test(token)) return 'the admin token must be visible ASCII characters, without spaces';
  return undefined;
}

/** Checks presented tokens against the configured one, which it keeps only as a digest. */
export interface AdminTokenCheck {
  matches(presented: string): boolean;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * Compares in constant time: both sides are hashed first, so the comparison runs over two digests of equal
 * length whatever the presented token's length, and leaks neither the token's length nor its prefix.
 */
export function adminTokenCheck(token: string): AdminTokenCheck {
  const expected = digest(token);
  return Object.freeze({ matches: (presented: string) => timingSafeEqual(digest(presented), expected) });
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), or undefined for any other value. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^bearer +([\x21-\x7e]+) *$/i.exec(authorization ?? '');
  return match?.[1];
}
