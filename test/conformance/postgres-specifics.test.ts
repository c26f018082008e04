import { afterEach, describe, expect, it } from 'vitest';
import { pgliteTestDialect, postgresTestDialect } from '../support/dialects/index.js';

for (const dialect of [postgresTestDialect, pgliteTestDialect])
  describe(`${dialect.name} store: storage settings`, () => {
    let cleanup: (() => Promise<void>) | undefined;
    afterEach(async () => {
      await cleanup?.();
      cleanup = undefined;
    });

    it('packs pages full (the default fillfactor): rows are inserted, then deleted, never claimed in place as engine v1 did', async () => {
      const e = await dialect.store.setup();
      cleanup = e.cleanup;
      const rows = await e.sql(`SELECT reloptions FROM pg_class WHERE oid = '${e.table}'::regclass`);
      expect(rows[0]?.reloptions).toBeNull();
    });
  });
