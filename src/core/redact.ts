/**
 * Removes the user name and password from a connection URL before it goes anywhere a person
 * or a log collector can read it. Anything that does not parse as a URL is hidden whole.
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
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
  for (const secret of secrets) {
    if (secret.length >= 3) result = result.split(secret).join('***');
  }
  return result;
}

/** The password carried by a URL, if any, so that it can be scrubbed from driver errors. */
export function secretsOfUrl(url: string | undefined): string[] {
  if (url === undefined) return [];
  try {
    const parsed = new URL(url);
    const secrets = [parsed.password, decodeURIComponent(parsed.password)].filter((s) => s !== '');
    return [...new Set(secrets)];
  } catch {
    return [];
  }
}
