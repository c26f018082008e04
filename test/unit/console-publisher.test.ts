import { describe, expect, it } from 'vitest';
import { OutboxerError } from '../../src/core/errors.js';
import { createConsolePublisher } from '../../src/brokers/console/index.js';

const message = {
  id: '01930000-0000-7000-8000-000000000001',
  seq: '1',
  topic: 'orders.created',
  type: 'order\u001b[31m.created',
  key: 'k\r\n1',
  body: '{"a":"\u001b[2J"}',
  contentType: 'application/json',
  headers: {},
  createdAt: new Date(),
  attempts: 1,
  lastError: null,
};

describe('console publisher', () => {
  it('prints one line per message with control characters escaped', async () => {
    const lines: string[] = [];
    const publisher = createConsolePublisher({ write: (line) => lines.push(line) });
    await publisher.publish(message);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('type=order\\u001b[31m.created');
    expect(lines[0]).toContain('key=k\\u000d\\u000a1');
    expect(lines[0]).not.toMatch(/[\u0000-\u001f]/);
  });

  it('leaves the payload out when asked, and refuses to publish after close', async () => {
    const lines: string[] = [];
    const publisher = createConsolePublisher({ write: (line) => lines.push(line), showPayload: false });
    await publisher.publish(message);
    expect(lines[0]).not.toContain('"a"');
    await publisher.close();
    await expect(publisher.publish(message)).rejects.toBeInstanceOf(OutboxerError);
  });

  it('prints a binary body as its size and content type, not its bytes', async () => {
    const lines: string[] = [];
    const publisher = createConsolePublisher({ write: (line) => lines.push(line) });
    await publisher.publish({ ...message, body: Uint8Array.from([0x1b, 0x5b, 0x32, 0x4a]), contentType: 'application/x-protobuf' });
    expect(lines[0]).toMatch(/ <4 bytes application\/x-protobuf>$/);
  });
});
