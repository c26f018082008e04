import { describe, expect, it } from 'vitest';
import { redactUrl, scrubSecrets, secretsOfUrl } from '../../src/core/redact.js';

const CANARY = 'Canary9x7Q';

describe('redactUrl', () => {
  it.each([
    ['amqp', `amqp://guest:${CANARY}@rabbit.internal:5672/vhost`, 'amqp://***:***@rabbit.internal:5672/vhost'],
    ['amqps', `amqps://svc-user:${CANARY}@mq.example.com/`, 'amqps://***:***@mq.example.com/'],
    ['postgres', `postgres://app:${CANARY}@db:5432/orders`, 'postgres://***:***@db:5432/orders'],
    ['postgresql', `postgresql://app:${CANARY}@db/orders?sslmode=require`, 'postgresql://***:***@db/orders?sslmode=require'],
    ['nats user+password', `nats://ops:${CANARY}@nats-1:4222`, 'nats://***:***@nats-1:4222'],
    ['nats token as user', `nats://${CANARY}@nats-1:4222`, 'nats://***@nats-1:4222'],
    ['password only', `amqp://:${CANARY}@h/`, 'amqp://:***@h/'],
    ['user only', `postgres://${CANARY}@127.0.0.1:5432/test`, 'postgres://***@127.0.0.1:5432/test'],
  ])('hides user and password (%s)', (_label, url, expected) => {
    const redacted = redactUrl(url);
    expect(redacted).toBe(expected);
    expect(redacted).not.toContain(CANARY);
  });

  it('hides passwords with percent-encoded characters, encoded and decoded', () => {
    const password = `p@ss:w/rd#${CANARY}%`;
    const url = `amqp://user:${encodeURIComponent(password)}@host:5672/`;
    expect(new URL(url).password).toBe(encodeURIComponent(password)); // the fixture is a well-formed URL
    const redacted = redactUrl(url);
    expect(redacted).toBe('amqp://***:***@host:5672/');
    expect(redacted).not.toContain(CANARY);
    expect(redacted).not.toContain(encodeURIComponent(password));
  });

  it('keeps host, port, path and harmless query parameters', () => {
    expect(redactUrl('postgres://db.internal:6543/app?application_name=relay&connect_timeout=5')).toBe(
      'postgres://db.internal:6543/app?application_name=relay&connect_timeout=5',
    );
    expect(redactUrl('nats://127.0.0.1:4222')).toBe('nats://127.0.0.1:4222');
  });

  it.each(['password', 'sslpassword', 'PASS', 'secret', 'client_secret', 'token', 'auth_token', 'apikey', 'api_key', 'sslkey'])(
    'hides the password-like query parameter %s',
    (name) => {
      const redacted = redactUrl(`postgres://db/app?${name}=${CANARY}&application_name=x`);
      expect(redacted).not.toContain(CANARY);
      expect(new URL(redacted).searchParams.get(name)).toBe('***');
      expect(new URL(redacted).searchParams.get('application_name')).toBe('x');
    },
  );

  it.each([`not a url ${CANARY}`, `amqp://user:${CANARY}@host:99999999/`, `postgres://app:${CANARY}@h1:5432,h2:5433/db`, `://user:${CANARY}@host`, ''])(
    'hides unparseable input whole: %j',
    (input) => {
      expect(redactUrl(input)).toBe('<unparseable url hidden>');
    },
  );

  // An unencoded '#' in a password ends the authority early: the parser sees a port and a fragment, with no
  // credentials at all, and the tail of the password came back verbatim.
  it('does not leak the tail of a password holding an unencoded #', () => {
    expect(redactUrl(`amqp://guest:1234#${CANARY}@rabbit:5672/`)).not.toContain(CANARY);
  });
});

describe('secretsOfUrl', () => {
  it('returns the raw and the decoded password, once each', () => {
    expect(secretsOfUrl(`amqp://u:${CANARY}@h/`)).toEqual([CANARY]);
    expect(secretsOfUrl('amqp://u:p%40ss%2Fw0rd@h/')).toEqual(['p%40ss%2Fw0rd', 'p@ss/w0rd']);
  });

  it('returns nothing when there is no password or no URL', () => {
    expect(secretsOfUrl(undefined)).toEqual([]);
    expect(secretsOfUrl('amqp://user@h/')).toEqual([]);
    expect(secretsOfUrl('nats://127.0.0.1:4222')).toEqual([]);
    expect(secretsOfUrl('not a url')).toEqual([]);
  });

  // A literal '%' that is not a valid escape (e.g. "50%off") made decodeURIComponent throw, and the catch
  // dropped the raw password too: scrubSecrets then had nothing to scrub.
  it('still returns the raw password when it holds a malformed percent escape', () => {
    expect(secretsOfUrl(`amqp://u:50%off${CANARY}@h/`)).toContain(`50%off${CANARY}`);
  });
});

describe('scrubSecrets', () => {
  it('replaces every occurrence of every secret', () => {
    const text = `connect ECONNREFUSED amqp://u:${CANARY}@h (password ${CANARY}), token abc123`;
    expect(scrubSecrets(text, [CANARY, 'abc123'])).toBe('connect ECONNREFUSED amqp://u:***@h (password ***), token ***');
  });

  it('treats secrets as plain text, not patterns', () => {
    expect(scrubSecrets('a.*b and a.*b', ['a.*b'])).toBe('*** and ***');
    expect(scrubSecrets('x$&y', ['$&y'])).toBe('x***');
  });

  it('scrubs short secrets too (a leak beats no readability) and ignores empty ones', () => {
    expect(scrubSecrets('pw=xy; user=bob', ['', 'xy'])).toBe('pw=***; user=bob');
  });

  it('scrubs the secrets of a URL from a driver error that echoes it', () => {
    const url = `postgres://app:${encodeURIComponent(`s3cr@t-${CANARY}`)}@db/app`;
    const driverError = `password authentication failed for "app" (s3cr@t-${CANARY}) using ${url}`;
    const scrubbed = scrubSecrets(driverError, secretsOfUrl(url));
    expect(scrubbed).not.toContain(CANARY);
  });

  // With overlapping secrets (a raw password and a longer one containing it), scrubbing the shorter first
  // leaves the rest of the longer one in the text.
  it('hides a secret entirely even when a shorter secret is a prefix of it', () => {
    const scrubbed = scrubSecrets(`pw=${CANARY}-tail`, [CANARY, `${CANARY}-tail`]);
    expect(scrubbed).toBe('pw=***');
  });
});
