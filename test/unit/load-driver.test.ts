import { describe, expect, it } from 'vitest';
import { OutboxerError } from '../../src/core/errors.js';
import { loadDriver } from '../../src/stores/shared/load-driver.js';

describe('loadDriver', () => {
  it('returns the loaded driver', async () => {
    await expect(loadDriver('PostgreSQL', 'pg', () => Promise.resolve('driver'))).resolves.toBe('driver');
  });

  it('names the store and the package to install when the driver is missing, in library use as under the CLI', async () => {
    const notFound = Object.assign(new Error("Cannot find package 'mysql2'"), { code: 'ERR_MODULE_NOT_FOUND' });
    const failure = await loadDriver('MariaDB/MySQL', 'mysql2', () => Promise.reject(notFound)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OutboxerError);
    expect(failure).toMatchObject({
      code: 'OUTBOXER_MISSING_DEPENDENCY',
      message: "the MariaDB/MySQL store needs the 'mysql2' package: npm install mysql2",
      cause: notFound,
    });
  });

  it('passes on any other failure of the import as it is', async () => {
    const broken = new SyntaxError('Unexpected token');
    await expect(loadDriver('PostgreSQL', 'pg', () => Promise.reject(broken))).rejects.toBe(broken);
  });
});
