/** The consumer of docs/publishers/redis.md as a program that runs: reads what the relay published, once, then ends. */
async function handle(id: string, type: string, contentType: string, body: Buffer): Promise<void> {
  process.stdout.write(`${JSON.stringify({ id, type, contentType, body: body.toString('utf8') })}\n`);
}

// #region docs/publishers/redis.md
import { createClient, RESP_TYPES } from 'redis';

const redis = createClient({ url: process.env.REDIS_URL! });
await redis.connect();
const stream = 'events:orders.created';
const group = 'billing';
try {
  await redis.xGroupCreate(stream, group, '0', { MKSTREAM: true });
} catch (error) {
  if (!(error instanceof Error && error.message.startsWith('BUSYGROUP'))) throw error; // the group exists already
}
// Buffers, not strings: a binary body stays byte for byte (a JSON body is its UTF-8 text)
const reader = redis.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
interface Batch { name: Buffer; messages: { id: Buffer; message: Record<string, Buffer | undefined> }[] }
const batches = (await reader.xReadGroup(group, 'worker-1', { key: stream, id: '>' }, { COUNT: 100, BLOCK: 5000 })) as Batch[] | null;
for (const { messages } of batches ?? []) {
  for (const { id: entryId, message: fields } of messages) {
    // `id` is the outbox id, the same on every copy: skip an id you handled already (a retried publish adds an entry)
    const id = String(fields.id);
    await handle(id, String(fields.type), String(fields['content-type']), fields.body ?? Buffer.alloc(0));
    await redis.xAck(stream, group, entryId);
  }
}
await redis.close();
// #endregion
