import { describe, expect, it } from 'vitest';
import { optionDefinition } from '../../src/ops/cli/option-definitions.js';
import { CLI_PUBLISHERS, publishersReading } from '../../src/ops/cli/publishers/registry.js';

describe('the CLI publisher registry', () => {
  it('names every publisher in the help of --publisher and defines every flag a publisher reads', () => {
    const summary = optionDefinition('publisher').summary;
    for (const entry of CLI_PUBLISHERS) {
      expect(summary).toContain(`\`${entry.name}\``);
      for (const flag of entry.flags) expect(optionDefinition(flag).commands).toContain('relay');
      for (const flag of entry.secretFlags ?? []) expect(entry.flags).toContain(flag);
    }
  });

  it('names each publisher once, and says which publishers read a flag', () => {
    const names = CLI_PUBLISHERS.map((entry) => entry.name);
    expect(new Set(names).size).toBe(names.length);
    expect(publishersReading('exchange')).toEqual(['rabbitmq']);
    expect(publishersReading('broker-url')).not.toContain('console');
  });

  it('gives every broker URL scheme with its colon, as URL.protocol has it', () => {
    for (const entry of CLI_PUBLISHERS) for (const protocol of entry.brokerUrl?.protocols ?? []) expect(protocol).toMatch(/^[a-z][a-z0-9+.-]*:$/);
  });
});
