import { describe, expect, it } from 'vitest';
import { collectSecrets, makeScrubber } from '../../src/ops/cli/io.js';

describe('the CLI scrubs the admin token from its output', () => {
  const token = 'tok/en+with=odd"chars';

  it.each([
    [['relay', '--http-port', '0', '--admin-token', token], {}],
    [['relay', `--admin-token=${token}`], {}],
    [['relay'], { OUTBOXER_ADMIN_TOKEN: token }],
  ])('from %j and %j, in every spelling a message may echo it', (argv, env) => {
    const scrub = makeScrubber(collectSecrets(argv, env));
    expect(scrub(`raw ${token}, json ${JSON.stringify(token)}, encoded ${encodeURIComponent(token)}`)).toBe('raw ***, json "***", encoded ***');
  });

  it('leaves values too short to be a token alone, so a typo cannot garble the output', () => {
    expect(collectSecrets(['relay', '--admin-token', 'short'], { OUTBOXER_ADMIN_TOKEN: 'tiny' })).toEqual([]);
  });
});
