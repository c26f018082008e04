import { createHmac } from 'node:crypto';

/** The prefix of a Standard Webhooks secret; the rest is the base64 of the signing key. */
export const SECRET_PREFIX = 'whsec_';
/** The key sizes the Standard Webhooks specification asks for. */
export const MIN_KEY_BYTES = 24;
export const MAX_KEY_BYTES = 64;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The signing key of a `whsec_<base64>` secret, or a description of what is wrong with it. The description never
 * quotes the secret: it may be most of a real one with a typo.
 */
export function signingKeyOf(secret: unknown): Buffer | string {
  if (typeof secret !== 'string') return 'must be a string `whsec_<base64>`';
  if (!secret.startsWith(SECRET_PREFIX)) return `must start with "${SECRET_PREFIX}" followed by the base64 of the key (value hidden)`;
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!BASE64.test(encoded) || encoded.length % 4 === 1)
    return `must be "${SECRET_PREFIX}" followed by standard base64 (A-Z a-z 0-9 + /, optional = padding); value hidden`;
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) {
    return `its key must be ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes (Standard Webhooks); it is ${key.length} bytes (value hidden)`;
  }
  return key;
}

/**
 * The `webhook-signature` header: one `v1,<base64 HMAC-SHA256>` per key, space-separated, each over
 * `${id}.${timestamp}.` followed by the body bytes exactly as sent.
 */
export function signatureHeader(keys: readonly Buffer[], id: string, timestampSeconds: number, body: Uint8Array): string {
  const prefix = Buffer.from(`${id}.${timestampSeconds}.`, 'utf8');
  return keys.map((key) => `v1,${createHmac('sha256', key).update(prefix).update(body).digest('base64')}`).join(' ');
}
