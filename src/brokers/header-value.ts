/** U+0021..U+007E without `"` (U+0022) and `%` (U+0025): the values that need no encoding. */
const SENT_UNCHANGED = /^[!#$&-~]*$/;

/**
 * NATS and HTTP header values may hold only printable ASCII. Every value outboxer sends there (the key, the type, the
 * producer's headers, CloudEvents attributes) is percent-encoded as the CloudEvents NATS and HTTP bindings
 * specify: space, `"`, `%` and every character outside U+0021..U+007E become the `%XX` of their UTF-8 bytes.
 * Plain ASCII values without space, `"` or `%` (ids, traceparent, most types) are sent unchanged.
 */
export function encodeHeaderValue(value: string): string {
  if (SENT_UNCHANGED.test(value)) return value;
  let encoded = '';
  for (const character of value) {
    const code = character.codePointAt(0) as number;
    if (code >= 0x21 && code <= 0x7e && character !== '"' && character !== '%') {
      encoded += character;
      continue;
    }
    for (const byte of Buffer.from(character, 'utf8')) encoded += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

/**
 * The inverse, as a receiver of the bindings does it: a double-quoted value is unquoted first, then one
 * round of percent-decoding. A value that does not decode (a lone `%`, or bytes that are not UTF-8, such as
 * an overlong encoding) is returned as it came: it was not written by an encoder.
 */
export function decodeHeaderValue(value: string): string {
  const unquoted = value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1).replace(/\\(.)/g, '$1') : value;
  if (!unquoted.includes('%')) return unquoted;
  try {
    return decodeURIComponent(unquoted);
  } catch {
    return value;
  }
}
