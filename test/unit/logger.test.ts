import { describe, expect, it } from 'vitest';
import { createJsonLogger, silentLogger } from '../../src/core/logger.js';

describe('silentLogger', () => {
  it('is frozen and says nothing', () => {
    expect(Object.isFrozen(silentLogger)).toBe(true);
    expect(silentLogger.error({ a: 1 }, 'x')).toBeUndefined();
  });
});

describe('createJsonLogger', () => {
  it('writes one JSON line per entry with time, level, message and fields', () => {
    const lines: string[] = [];
    const logger = createJsonLogger('debug', (line) => lines.push(line));
    logger.info({ id: 'm1', attempts: 2 }, 'published');
    expect(lines).toHaveLength(1);
    const line = lines[0] as string;
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toContain('\n');
    const entry = JSON.parse(line) as Record<string, unknown>;
    expect(entry).toMatchObject({ level: 'info', msg: 'published', id: 'm1', attempts: 2 });
    expect(new Date(entry.time as string).toISOString()).toBe(entry.time);
  });

  it('drops entries below the minimum level', () => {
    const levels: string[] = [];
    const logger = createJsonLogger('warn', (line) => levels.push((JSON.parse(line) as { level: string }).level));
    logger.debug({}, 'd');
    logger.info({}, 'i');
    logger.warn({}, 'w');
    logger.error({}, 'e');
    expect(levels).toEqual(['warn', 'error']);
  });

  it('defaults to info', () => {
    const lines: string[] = [];
    const logger = createJsonLogger(undefined, (line) => lines.push(line));
    logger.debug({}, 'd');
    logger.info({}, 'i');
    expect(lines).toHaveLength(1);
  });

  it('keeps a message with newlines on one line', () => {
    const lines: string[] = [];
    createJsonLogger('info', (line) => lines.push(line)).error({ error: 'a\nb' }, 'multi\nline');
    expect(lines).toHaveLength(1);
    expect((lines[0] as string).split('\n')).toHaveLength(2);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ msg: 'multi\nline', error: 'a\nb' });
  });
});
