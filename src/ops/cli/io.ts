import { scrubSecrets, secretsOfUrl } from '../../core/redact.js';
import type { Env } from './config.js';

/** What the commands may touch of the process; main.ts wires it to the real one, tests may not need to. */
export interface CliIo {
  readonly env: Env;
  /** Standard output, already scrubbed of secrets. */
  out(text: string): void;
  /** Standard error, already scrubbed of secrets. */
  err(text: string): void;
  /** Calls `handler` on SIGINT and SIGTERM; returns a function that removes it. */
  onSignal(handler: (signal: string) => void): () => void;
  /** Ends the process at once (the relay's second signal). Only main.ts implements it. */
  forceExit(code: number): void;
}

const URL_VARIABLES = ['OUTBOXER_DATABASE_URL', 'OUTBOXER_BROKER_URL'];
const SECRET_PARAM = /pass|secret|token|key/i;
/** NATS reads `nats://token@host` as a token: there a lone user name is a secret too. */
const TOKEN_IN_USER = new Set(['nats:', 'tls:', 'ws:', 'wss:']);

function secretsOfOne(candidate: string): string[] {
  const secrets = secretsOfUrl(candidate);
  try {
    const parsed = new URL(candidate);
    if (TOKEN_IN_USER.has(parsed.protocol) && parsed.username !== '' && parsed.password === '') {
      secrets.push(parsed.username, decodeURIComponent(parsed.username));
    }
    for (const [name, value] of parsed.searchParams) {
      if (SECRET_PARAM.test(name) && value !== '') secrets.push(value, encodeURIComponent(value));
    }
  } catch {
    // not a URL: nothing to collect
  }
  return secrets;
}

/** Shorter values are refused as tokens anyway; scrubbing them would garble ordinary words. */
const MIN_SCRUBBED_TOKEN = 8;

/** The admin token as given by `--admin-token <t>`, `--admin-token=<t>` or OUTBOXER_ADMIN_TOKEN. */
function adminTokens(argv: readonly string[], env: Env): string[] {
  const tokens = [env.OUTBOXER_ADMIN_TOKEN ?? ''];
  argv.forEach((arg, index) => {
    if (arg === '--admin-token') tokens.push(argv[index + 1] ?? '');
    else if (arg.startsWith('--admin-token=')) tokens.push(arg.slice('--admin-token='.length));
  });
  return tokens.filter((token) => token.length >= MIN_SCRUBBED_TOKEN);
}

/**
 * Every password (and secret query parameter) carried by a URL on the command line or in the
 * environment, and the admin token, in the spellings a message may echo them: raw, percent-decoded,
 * percent-encoded, JSON-escaped.
 */
export function collectSecrets(argv: readonly string[], env: Env): string[] {
  const candidates: string[] = [];
  for (const arg of argv) {
    const value = arg.startsWith('--') && arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : arg;
    candidates.push(...value.split(','));
  }
  for (const name of URL_VARIABLES) candidates.push(...(env[name] ?? '').split(','));
  const secrets = new Set<string>();
  const found = [...candidates.flatMap((candidate) => secretsOfOne(candidate.trim())), ...adminTokens(argv, env)];
  for (const secret of found) {
    secrets.add(secret);
    secrets.add(JSON.stringify(secret).slice(1, -1));
    secrets.add(encodeURIComponent(secret));
  }
  // Longest first, so that a secret containing another is replaced whole.
  return [...secrets].filter((s) => s !== '').sort((a, b) => b.length - a.length);
}

/**
 * A text filter that replaces every known secret of at least `minLength` characters by `***`.
 * Standard error takes them all; standard output (DDL, JSON, data) only long ones, so that a short
 * password cannot turn machine output into garbage (`out` inside every `outbox`).
 */
export function makeScrubber(secrets: readonly string[], minLength = 1): (text: string) => string {
  const used = secrets.filter((secret) => secret.length >= minLength);
  return used.length === 0 ? (text) => text : (text) => scrubSecrets(text, used);
}
