/** The longest trouble reason a relay writes to its relays row, in bytes; longer ones are cut. */
export const MAX_TROUBLE_BYTES = 500;

/** A trouble reason cut to `MAX_TROUBLE_BYTES` of UTF-8 at a character boundary. */
export function boundedTrouble(reason: string): string {
  const bytes = Buffer.from(reason, 'utf8');
  if (bytes.length <= MAX_TROUBLE_BYTES) return reason;
  let cut = MAX_TROUBLE_BYTES - 3;
  // a UTF-8 continuation byte (10xxxxxx) never starts a character
  while (cut > 0 && ((bytes[cut] ?? 0) & 0xc0) === 0x80) cut--;
  return `${bytes.subarray(0, cut).toString('utf8')}...`;
}
