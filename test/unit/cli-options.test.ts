import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { resolveRelayOptions, type RelayOptions, type RelayOptionsInput } from '../../src/core/relay-options.js';
import type { OptionValues } from '../../src/ops/cli/args.js';
import { resolveConfig } from '../../src/ops/cli/config.js';
import { UsageError } from '../../src/ops/cli/errors.js';
import { helpText } from '../../src/ops/cli/help.js';
import { OPTION_DEFINITIONS } from '../../src/ops/cli/option-definitions.js';
import { MAX_TIMER_MS, type OptionDefinition, type OptionTarget } from '../../src/ops/cli/option-definition.js';
import { withCurrentReference } from '../../src/ops/cli/option-reference.js';

const run = promisify(execFile);
const BASE_ENV = { OUTBOXER_DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' };

/** A value other than the default for every option that reaches the relay or its store; the test below demands one each. */
const SAMPLES: Readonly<Record<string, { text: string; value: string | number | boolean }>> = {
  engine: { text: 'v2', value: 'v2' },
  owner: { text: 'relay-a', value: 'relay-a' },
  'batch-size': { text: '100', value: 100 },
  'max-in-flight': { text: '64', value: 64 },
  lanes: { text: '5', value: 5 },
  'lease-ms': { text: '40000', value: 40_000 },
  'publish-timeout-ms': { text: '5000', value: 5000 },
  'poll-interval-ms': { text: '300', value: 300 },
  'max-poll-interval-ms': { text: '5000', value: 5000 },
  'handover-check-ms': { text: '0', value: 0 },
  'broker-trouble-after-ms': { text: '4000', value: 4000 },
  'error-backoff-ms': { text: '600', value: 600 },
  'max-error-backoff-ms': { text: '20000', value: 20_000 },
  'max-attempts': { text: '7', value: 7 },
  'retry-base-delay-ms': { text: '2000', value: 2000 },
  'retry-max-delay-ms': { text: '400000', value: 400_000 },
  'retry-jitter': { text: '0.25', value: 0.25 },
  'housekeeping-interval-ms': { text: '30000', value: 30_000 },
  'housekeeping-batch-size': { text: '500', value: 500 },
  'retain-published-ms': { text: '3600000', value: 3_600_000 },
  'idempotency-window-ms': { text: '7200000', value: 7_200_000 },
  'prepared-statements': { text: 'false', value: false },
};

const targeted = OPTION_DEFINITIONS.filter((d): d is OptionDefinition & { target: OptionTarget; env: string } => d.target !== undefined && d.env !== undefined);

function relayConfig(values: OptionValues, env: Record<string, string> = {}) {
  const config = resolveConfig('relay', values, [], { ...BASE_ENV, ...env });
  if (config.relay === undefined) throw new Error('no relay settings');
  return config.relay;
}

/** Where an option's value ends up: in the resolved relay options, or in the store options the relay opens its store with. */
function landed(values: OptionValues, env: Record<string, string>, target: OptionTarget): unknown {
  const settings = relayConfig(values, env);
  if ('store' in target) return settings.store[target.store];
  const resolved: RelayOptions = resolveRelayOptions(settings.options);
  return 'relay' in target ? resolved[target.relay] : resolved.retry[target.retry];
}

function usageError(values: OptionValues, env: Record<string, string> = {}): UsageError {
  try {
    relayConfig(values, env);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return error as UsageError;
  }
  throw new Error(`accepted ${JSON.stringify(values)} ${JSON.stringify(env)}`);
}

describe('CLI options: one table for flags, variables, help and docs', () => {
  it('has a sample for every option that reaches the relay or its store, and every one has a variable', () => {
    const withTarget = OPTION_DEFINITIONS.filter((d) => d.target !== undefined);
    expect(withTarget.map((d) => d.flag).sort()).toEqual(Object.keys(SAMPLES).sort());
    expect(targeted).toHaveLength(withTarget.length);
  });

  it.each(targeted.map((d) => [d.flag, d.env, d] as const))('--%s and %s reach the resolved option', (flag, env, definition) => {
    const sample = SAMPLES[flag];
    if (sample === undefined) throw new Error(`no sample for --${flag}`);
    expect(landed({ [flag]: sample.text }, {}, definition.target)).toEqual(sample.value);
    expect(landed({}, { [env]: sample.text }, definition.target)).toEqual(sample.value);
  });

  it('a flag wins over its variable, and an empty variable counts as unset', () => {
    expect(landed({ lanes: '2' }, { OUTBOXER_LANES: '7' }, { relay: 'lanes' })).toBe(2);
    expect(landed({}, { OUTBOXER_LANES: '' }, { relay: 'lanes' })).toBe(resolveRelayOptions().lanes);
  });

  it('sets nothing it was not given: the library decides every default', () => {
    const settings = relayConfig({});
    expect(settings.options).toEqual({});
    expect(settings.store).toEqual({});
  });

  it('raises the idle poll ceiling with a poll interval above it, unless the ceiling is given', () => {
    expect(relayConfig({ 'poll-interval-ms': '5000' }).options).toEqual({ pollIntervalMs: 5000, maxPollIntervalMs: 5000 });
    expect(relayConfig({ 'poll-interval-ms': '50' }).options).toEqual({ pollIntervalMs: 50, maxPollIntervalMs: 2000 });
    expect(relayConfig({ 'poll-interval-ms': '50', 'max-poll-interval-ms': '100' }).options).toEqual({ pollIntervalMs: 50, maxPollIntervalMs: 100 });
  });

  it('bounds every number as the library does: what the table accepts the library accepts, and below the minimum both refuse', () => {
    const numeric = targeted.filter((d) => (d.kind === 'integer' || d.kind === 'decimal') && !('store' in d.target));
    const input = (pick: (d: OptionDefinition & { min: number; max: number }) => number) => {
      const values: OptionValues = Object.fromEntries(numeric.map((d) => [d.flag, String(pick(d as OptionDefinition & { min: number; max: number }))]));
      return relayConfig(values).options;
    };
    // Every option at its minimum, then every one at its maximum, together: both are valid relay options.
    expect(() => resolveRelayOptions(input((d) => d.min))).not.toThrow();
    expect(() => resolveRelayOptions(input((d) => d.max))).not.toThrow();
    for (const definition of numeric) {
      if (definition.kind !== 'integer' && definition.kind !== 'decimal') continue;
      const path = 'relay' in definition.target ? definition.target.relay : `retry.${'retry' in definition.target ? definition.target.retry : ''}`;
      const below = path.startsWith('retry.') ? { retry: { [path.slice(6)]: definition.min - 1 } } : { [path]: definition.min - 1 };
      expect(() => resolveRelayOptions(below as RelayOptionsInput), `${path} = min - 1`).toThrow(path);
      expect(usageError({ [definition.flag]: String(definition.min - 1) }).message).toContain(`--${definition.flag}`);
      if (definition.max >= Math.floor(MAX_TIMER_MS / 2)) continue; // the CLI's own bound: Node's longest timer
      const above = path.startsWith('retry.') ? { retry: { [path.slice(6)]: definition.max + 1 } } : { [path]: definition.max + 1 };
      expect(() => resolveRelayOptions(above as RelayOptionsInput), `${path} = max + 1`).toThrow(path);
    }
  });

  it.each([
    [{ lanes: '17' }, {}, /^--lanes must be a whole number from 1 to 16; got "17" \(set by --lanes or OUTBOXER_LANES\)$/],
    [
      {},
      { OUTBOXER_RETRY_JITTER: '1.5' },
      /^OUTBOXER_RETRY_JITTER must be a number from 0 to 1; got "1.5" \(set by --retry-jitter or OUTBOXER_RETRY_JITTER\)$/,
    ],
    [
      {},
      { OUTBOXER_PREPARED_STATEMENTS: 'no' },
      /^OUTBOXER_PREPARED_STATEMENTS must be true or false; got "no" \(set by --prepared-statements or OUTBOXER_PREPARED_STATEMENTS\)$/,
    ],
    [{}, { OUTBOXER_MIGRATE: 'yes' }, /OUTBOXER_MIGRATE must be true or false/],
    [{ 'max-in-flight': 'many' }, {}, /--max-in-flight must be a whole number .*\(set by --max-in-flight or OUTBOXER_MAX_IN_FLIGHT\)/],
    [
      { 'retry-base-delay-ms': '5000' },
      { OUTBOXER_RETRY_MAX_DELAY_MS: '1000' },
      /retry\.maxDelayMs must be >= retry\.baseDelayMs \(set by --retry-base-delay-ms or OUTBOXER_RETRY_BASE_DELAY_MS; --retry-max-delay-ms or OUTBOXER_RETRY_MAX_DELAY_MS\)/,
    ],
    [
      { 'error-backoff-ms': '900', 'max-error-backoff-ms': '800' },
      {},
      /maxErrorBackoffMs must be >= errorBackoffMs \(set by --error-backoff-ms .*; --max-error-backoff-ms or OUTBOXER_MAX_ERROR_BACKOFF_MS\)/,
    ],
    [{ owner: 'x'.repeat(201) }, {}, /relay option owner: .*\(set by --owner or OUTBOXER_OWNER\)/],
    [{ engine: 'v3' }, {}, /relay option engine: .*\(set by --engine or OUTBOXER_ENGINE\)/],
    [{}, { OUTBOXER_ENGINE: 'v1' }, /relay option engine: engine v1 was removed before any release.*\(set by --engine or OUTBOXER_ENGINE\)/],
    [
      { engine: 'v2', 'lease-ms': '5000', 'publish-timeout-ms': '2000' },
      {},
      /at least 3 x publishTimeoutMs .*engine v2.*\(set by --lease-ms or OUTBOXER_LEASE_MS; --publish-timeout-ms or OUTBOXER_PUBLISH_TIMEOUT_MS\)/,
    ],
  ] as const)('refuses %j (env %j), naming the flag and the variable', (values, env, message) => {
    expect(usageError(values, env).message).toMatch(message);
  });

  it('relay --help lists every relay flag with its variable and the library default', () => {
    const help = helpText('relay');
    for (const definition of OPTION_DEFINITIONS.filter((d) => d.commands.includes('relay') && d.env !== undefined)) {
      expect(help).toMatch(new RegExp(`--${definition.flag}\\b.*\\s${definition.env}\\s`));
    }
    expect(help).toMatch(/--lanes <n>\s+OUTBOXER_LANES\s+.*\(default 3\)/);
    expect(help).toMatch(/--retry-jitter <0\.\.1>\s+OUTBOXER_RETRY_JITTER\s+.*\(default 0\.5\)/);
  });

  it('--engine is a relay option only: the relay reads the flag and OUTBOXER_ENGINE; migrate resizes and reads neither', () => {
    const migrate = (values: OptionValues, env: Record<string, string> = {}) => resolveConfig('migrate', values, [], { ...BASE_ENV, ...env }).migrate;
    expect(migrate({}, { OUTBOXER_ENGINE: 'v2' })).toEqual({ partitions: undefined, resizeTimeoutMs: undefined, cancelResize: false, lock: {} });
    expect(migrate({ partitions: '16', 'resize-timeout-ms': '1000', 'lock-attempts': '3' })).toEqual({
      partitions: 16,
      resizeTimeoutMs: 1000,
      cancelResize: false,
      lock: { lockAttempts: 3 },
    });
    expect(relayConfig({}, { OUTBOXER_ENGINE: 'v2' }).options).toEqual({ engine: 'v2' });
    const migrateHelp = helpText('migrate');
    expect(migrateHelp).not.toContain('--engine');
    expect(migrateHelp).toMatch(/--partitions <n>\s+resize to this many partitions .*1-1024/);
    expect(helpText('relay')).toMatch(/--engine <engine>\s+OUTBOXER_ENGINE\s+v2, the only engine: relays lease partitions \(default v2\)/);
  });

  it('the HTTP server is off without a port; its variables are ignored then; with one, host and token come from flags or variables', () => {
    const token = 'an-admin-token-of-32-characters!';
    expect(relayConfig({}).http).toBeUndefined();
    expect(relayConfig({}, { OUTBOXER_HTTP_HOST: '0.0.0.0', OUTBOXER_ADMIN_TOKEN: token }).http).toBeUndefined();
    expect(relayConfig({ 'http-port': '0' }).http).toEqual({ port: 0, host: '127.0.0.1', adminToken: undefined });
    expect(relayConfig({}, { OUTBOXER_HTTP_PORT: '9465', OUTBOXER_HTTP_HOST: '0.0.0.0', OUTBOXER_ADMIN_TOKEN: token }).http).toEqual({
      port: 9465,
      host: '0.0.0.0',
      adminToken: token,
    });
    expect(relayConfig({ 'http-port': '9000', 'http-host': '::1' }, { OUTBOXER_HTTP_PORT: '9465', OUTBOXER_HTTP_HOST: '0.0.0.0' }).http).toMatchObject({
      port: 9000,
      host: '::1',
    });
    expect(relayConfig({ 'http-port': '9000' }, { OUTBOXER_ADMIN_TOKEN: '' }).http?.adminToken).toBeUndefined();
    const refused = usageError({ 'http-port': '9000', 'admin-token': 'sixteen chars no' });
    expect(refused.message).toBe(
      '--admin-token: the admin token must be visible ASCII characters, without spaces (set by --admin-token or OUTBOXER_ADMIN_TOKEN)',
    );
    expect(helpText('relay')).toMatch(/--admin-token <token>\s+OUTBOXER_ADMIN_TOKEN\s+bearer token for changes .*\(default none: changes disabled\)/);
  });

  it('--tracing and OUTBOXER_TRACING turn the publish spans on; they are off by default', () => {
    expect(relayConfig({}).tracing).toBe(false);
    expect(relayConfig({ tracing: true }).tracing).toBe(true);
    expect(relayConfig({}, { OUTBOXER_TRACING: 'true' }).tracing).toBe(true);
    expect(relayConfig({}, { OUTBOXER_TRACING: 'false' }).tracing).toBe(false);
    expect(usageError({}, { OUTBOXER_TRACING: '1' }).message).toBe('OUTBOXER_TRACING must be true or false; got "1" (set by --tracing or OUTBOXER_TRACING)');
  });

  it('topics pause and resume take one topic and pause a reason, checked as the store checks them, before anything connects', () => {
    const topics = (command: 'topics list' | 'topics pause' | 'topics resume', values: OptionValues, operands: string[]) =>
      resolveConfig(command, values, operands, BASE_ENV);
    expect(topics('topics pause', { reason: '  broker maintenance ' }, ['orders.created'])).toMatchObject({
      topic: 'orders.created',
      reason: 'broker maintenance',
      ids: [],
    });
    expect(topics('topics pause', {}, ['orders.created'])).toMatchObject({ topic: 'orders.created', reason: '' });
    expect(topics('topics resume', {}, ['Orders.Created'])).toMatchObject({ topic: 'Orders.Created', reason: '' });
    expect(topics('topics list', { json: true }, [])).toMatchObject({ topic: undefined, json: true });
    const refusal = (values: OptionValues, operands: string[]) => {
      try {
        topics('topics pause', values, operands);
      } catch (error) {
        expect(error).toBeInstanceOf(UsageError);
        return error as UsageError;
      }
      throw new Error('accepted');
    };
    expect(refusal({}, ['a\u202eb']).message).toMatch(/^OUTBOXER_INVALID_TOPIC: a paused topic must be .*; got "a\?b" \(5 bytes\)$/);
    expect(refusal({}, ['é'.repeat(128)]).message).toMatch(/^OUTBOXER_INVALID_TOPIC: .*\(256 bytes\)$/);
    expect(refusal({ reason: 'x'.repeat(501) }, ['orders.created']).message).toMatch(
      /^OUTBOXER_INVALID_OPTION: the reason for pausing topic "orders.created" must be a string of at most 500 bytes/,
    );
    expect(refusal({ reason: 'x'.repeat(501) }, ['orders.created']).topic).toBe('topics pause');
    expect(helpText('topics pause')).toMatch(/--reason <text>\s+why \(at most 500 bytes, one line\)/);
    expect(helpText('topics')).toMatch(/topics resume <topic>/);
  });

  it('the main help gives exit 2 for a relay misconfiguration found at start, as docs/cli.md does', () => {
    expect(helpText('main')).toMatch(/2 usage error or,\s+for relay, a misconfiguration found at start/);
  });

  it("docs/cli.md's option reference is the one the table makes (npm run docs:cli)", async () => {
    const docs = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');
    expect(docs).toBe(withCurrentReference(docs));
    for (const definition of targeted) expect(docs).toContain(`| \`${definition.env}\` |`);
    const check = await run(process.execPath, ['--import', 'tsx', 'scripts/docs-cli.ts', '--check']);
    expect(check.stderr).toBe('');
  });
});
