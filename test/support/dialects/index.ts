import type { EndToEndHarness } from './end-to-end-harness.js';
import { mariadbEndToEnd } from './mariadb/mariadb-end-to-end.js';
import { mariadbTestDialect } from './mariadb/mariadb-dialect.js';
import { pgliteTestDialect, postgresTestDialect } from './postgres/postgres-dialects.js';
import { postgresEndToEnd } from './postgres/postgres-end-to-end.js';
import { sqliteTestDialect } from './sqlite/sqlite-dialect.js';
import { sqliteEndToEnd } from './sqlite/sqlite-end-to-end.js';
import type { TestDialect } from './test-dialect.js';

export type { TestDialect } from './test-dialect.js';
export { mariadbReaderHarness, mariadbTestDialect } from './mariadb/mariadb-dialect.js';
export { pgliteTestDialect, postgresTestDialect } from './postgres/postgres-dialects.js';
export { sqliteTestDialect } from './sqlite/sqlite-dialect.js';

/** Every database the conformance suites run over. */
export const testDialects: readonly TestDialect[] = [postgresTestDialect, pgliteTestDialect, mariadbTestDialect, sqliteTestDialect];

/** The databases whose relays also run as child processes: the shared end-to-end test runs over each. */
export const endToEndHarnesses: readonly EndToEndHarness[] = [postgresEndToEnd, mariadbEndToEnd, sqliteEndToEnd];
