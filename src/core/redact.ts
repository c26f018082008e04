/**
 * Removes the user name and password from a connection URL before it goes anywhere a person
 * or a log collector can read it. Anything that does not parse as a URL is hidden whole, and so is a
 * URL whose fragment holds an `@` (an unencoded `#` in a password would otherwise leak its tail).
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.hash.includes('@')) return '<url with unencoded credentials hidden>';
    parsed.hash = '';
    if (parsed.username !== '' || parsed.password !== '') {
      parsed.username = parsed.username === '' ? '' : '***';
      parsed.password = parsed.password === '' ? '' : '***';
    }
    for (const name of [...parsed.searchParams.keys()]) {
      if (/pass|secret|token|key/i.test(name)) parsed.searchParams.set(name, '***');
    }
    return parsed.toString();
  } catch {
    return '<unparseable url hidden>';
  }
}

/** Replaces every occurrence of each secret inside a text (for error messages that echo a URL). */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let result = text;
  const longestFirst = [...secrets].filter((s) => s !== '').sort((a, b) => b.length - a.length);
  for (const secret of longestFirst) result = result.split(secret).join('***');
  return result;
}

/** The password carried by a URL (raw and decoded), so that it can be scrubbed from driver errors. */
export function secretsOfUrl(url: string | undefined): string[] {
  if (url === undefined) return [];
  const raw = /^[a-z][a-z0-9+.-]*:\/\/[^:/?#]*:([^@/?]*)@/i.exec(url)?.[1];
  const secrets = new Set<string>();
  if (raw !== undefined && raw !== '') secrets.add(raw);
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') secrets.add(parsed.password);
  } catch {
    // unparseable: the raw match above is all there is
  }
  for (const secret of [...secrets]) {
    try {
      secrets.add(decodeURIComponent(secret));
    } catch {
      // a stray % is not an escape: keep the raw form only
    }
  }
  return [...secrets].filter((s) => s !== '');
}
