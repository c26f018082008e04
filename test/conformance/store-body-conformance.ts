import { afterEach, describe, expect, it } from 'vitest';
import { validateMessage } from '../../src/core/validate-message.js';
import { readFromStart } from '../support/partition-relay-fixture.js';
import type { SqlStoreEnvironment, SqlStoreHarness, StoreEnvironment } from './store-harness.js';

const limits = { maxPayloadBytes: 256 * 1024 };

/** What jsonb would rewrite: key order, spacing, a \u escape, an exponent, an empty array's inner space. */
export const ODD_JSON = '{"b": 1,  "a":"caf\\u00e9", "n": 1e3, "z":[ ], "t":true}';
/** Bytes that are no text at all: NUL, 0xff, and a lone UTF-8 continuation byte. */
export const BINARY = Uint8Array.from([0x00, 0x01, 0xff, 0x80, 0x7b, 0x00]);

/** The pending messages as a relay reads them. */
const readAll = <Tx>(e: StoreEnvironment<Tx>) => readFromStart(e.store.reader, 64, 50);
const asBytes = (body: unknown): number[] => [...(body as Uint8Array)];

/**
 * The message body contract (the store gives back exactly the bytes and content type it was given), and
 * the table itself as SQL producers and DBAs see it: this suite runs plain SQL, for SQL stores only.
 */
export function describeStoreBodyConformance<Tx>(harness: SqlStoreHarness<Tx>): void {
  describe(`${harness.name} store: exact bodies and the table contract`, () => {
    let env: SqlStoreEnvironment<Tx> | undefined;
    const setup = async () => {
      env = await harness.setup();
      return env;
    };
    afterEach(async () => {
      await env?.cleanup();
      env = undefined;
    });

    it('gives back a JSON body written by plain SQL byte for byte (key order, spacing, escapes, 1e3)', async () => {
      const e = await setup();
      await e.sql(`INSERT INTO ${e.table} (topic, type, payload) VALUES ('orders.created', 'order.created', $1)`, [ODD_JSON]);
      const [message] = await readAll(e);
      expect(message?.body).toBe(ODD_JSON);
      expect(message?.contentType).toBe('application/json');
    });

    it('gives back an enqueued payload exactly as JSON.stringify wrote it, with its content type', async () => {
      const e = await setup();
      // eslint-disable-next-line no-loss-of-precision -- on purpose: the store must keep what JSON.stringify writes for it
      const payload = { zeta: 1, alpha: { d: [1.5, 2e-7], c: 'é😀' }, big: 12345678901234567890 };
      const plain = validateMessage({ topic: 't', type: 'x', payload }, limits);
      const typed = validateMessage({ topic: 't', type: 'x', payload, contentType: 'application/vnd.acme.order+json; charset=utf-8' }, limits);
      await e.transaction((tx) => e.store.insert(tx, [plain, typed]));
      expect((await readAll(e)).map((m) => [m.body, m.contentType])).toEqual([
        [JSON.stringify(payload), 'application/json'],
        [JSON.stringify(payload), 'application/vnd.acme.order+json; charset=utf-8'],
      ]);
    });

    it('stores a binary body as bytes with its content type, through insert and plain SQL', async () => {
      const e = await setup();
      const inserted = validateMessage({ topic: 't', type: 'x', payload: BINARY, contentType: 'application/x-protobuf' }, limits);
      const buffer = validateMessage({ topic: 't', type: 'x', payload: Buffer.from(BINARY) }, limits);
      await e.transaction((tx) => e.store.insert(tx, [inserted, buffer]));
      await e.sql(`INSERT INTO ${e.table} (topic, type, payload_bytes, content_type) VALUES ('t', 'x', '\\x0001ff807b00'::bytea, 'application/avro')`);
      expect((await readAll(e)).map((m) => [asBytes(m.body), m.contentType])).toEqual([
        [[...BINARY], 'application/x-protobuf'],
        [[...BINARY], 'application/octet-stream'],
        [[...BINARY], 'application/avro'],
      ]);
    });

    it('refuses headers that are not an object of strings, naming the header, for SQL producers', async () => {
      const e = await setup();
      const insert = (headers: string) => e.sql(`INSERT INTO ${e.table} (topic, type, payload, headers) VALUES ('t', 'x', '{}', $1::jsonb)`, [headers]);
      await expect(insert('{"tenant": "acme", "retry": 3}')).rejects.toThrow(e.refusals.headerNotString('retry', 'number'));
      await expect(insert('{"tenant": null}')).rejects.toThrow(e.refusals.headerNotString('tenant', 'null'));
      await expect(insert('{"nested": {"a": "b"}}')).rejects.toThrow(e.refusals.headerNotString('nested', 'object'));
      await expect(insert('["tenant"]')).rejects.toThrow(e.refusals.headersNotObject);
      await insert('{"tenant": "acme"}');
      expect((await readAll(e)).map((m) => m.headers)).toEqual([{ tenant: 'acme' }]);
    });

    it('refuses a row with no body, with two bodies, or a JSON body under a content type that is not JSON', async () => {
      const e = await setup();
      const columns = `INSERT INTO ${e.table} (topic, type, payload, payload_bytes, content_type)`;
      await expect(e.sql(`${columns} VALUES ('t', 'x', NULL, NULL, 'application/json')`)).rejects.toThrow(e.refusals.oneBody);
      await expect(e.sql(`${columns} VALUES ('t', 'x', '{}', '\\x00'::bytea, 'application/json')`)).rejects.toThrow(e.refusals.oneBody);
      await expect(e.sql(`${columns} VALUES ('t', 'x', '{}', NULL, 'text/plain')`)).rejects.toThrow(e.refusals.contentType);
      await expect(e.sql(`${columns} VALUES ('t', 'x', NULL, '\\x00'::bytea, 'not a media type')`)).rejects.toThrow(e.refusals.contentType);
      await expect(e.sql(`${columns} VALUES ('t', 'x', '{"a": }', NULL, 'application/json')`)).rejects.toThrow(e.refusals.payloadNotJson);
      expect(await readAll(e)).toHaveLength(0);
    });
  });
}
