import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The datasource providers the Prisma tests generate a client for. */
export type PrismaProvider = 'postgresql' | 'mysql' | 'sqlite';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const require = createRequire(import.meta.url);
const STAMP_FILE = '.outboxer-stamp';

/** Where the clients are generated (gitignored: never committed, made again when the schema or Prisma changes). */
export const prismaClientDirectories = Object.freeze({
  /** The tests' own client of each provider. */
  test: (provider: PrismaProvider) => join(ROOT, 'test/support/prisma/generated', provider),
  /** The client examples/orms/prisma.ts imports as `./generated/prisma/client.js` (PostgreSQL). */
  example: join(ROOT, 'examples/orms/generated/prisma'),
});

/** One model, `Order (id, note)` on the table `orders`: the business row of the adapter suite and the example. */
function schemaText(provider: PrismaProvider, output: string): string {
  return `generator client {
  provider            = "prisma-client"
  output              = ${JSON.stringify(output)}
  importFileExtension = "js"
}

datasource db {
  provider = "${provider}"
}

model Order {
  id   Int    @id
  note String

  @@map("orders")
}
`;
}

/**
 * `prisma generate` with the CLI installed in node_modules and no network. With a driver adapter the generated
 * client needs no query engine (its query compiler is WebAssembly inside @prisma/client), but the CLI still
 * downloads the schema engine before `generate`, which it never runs there: PRISMA_SCHEMA_ENGINE_BINARY names a
 * stand-in that exists (the CLI checks only that), and CHECKPOINT_DISABLE skips the version check request.
 * No prisma.config.ts is needed: the schema needs no URL to generate, and the CLI runs in a scratch directory,
 * so no config file of the repository is picked up either.
 */
async function generate(provider: PrismaProvider, output: string): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), 'outboxer-prisma-'));
  try {
    const schema = join(scratch, 'schema.prisma');
    const standIn = join(scratch, 'no-schema-engine.sh');
    await writeFile(schema, schemaText(provider, output));
    await writeFile(standIn, "#!/bin/sh\necho 'no Prisma schema engine here: prisma generate does not need one' >&2\nexit 1\n", { mode: 0o755 });
    const cli = join(dirname(require.resolve('prisma/package.json')), 'build/index.js');
    await promisify(execFile)(process.execPath, [cli, 'generate', '--schema', schema], {
      cwd: scratch,
      env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: standIn, CHECKPOINT_DISABLE: '1', PRISMA_HIDE_UPDATE_MESSAGE: '1' },
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** What a generated client depends on: its schema (output aside) and the versions of the CLI and the runtime. */
async function stampOf(provider: PrismaProvider): Promise<string> {
  const versions = await Promise.all(
    ['prisma/package.json', '@prisma/client/package.json'].map(async (name) => JSON.parse(await readFile(require.resolve(name), 'utf8')).version as string),
  );
  return createHash('sha256').update(schemaText(provider, '')).update(versions.join(' ')).digest('hex');
}

async function stampIn(directory: string): Promise<string | null> {
  return readFile(join(directory, STAMP_FILE), 'utf8').catch(() => null);
}

/**
 * Makes sure `directory` holds a client generated for `provider` from today's schema and Prisma: a fresh one is
 * generated beside it and renamed into place whole, so parallel test files never import a half-written client.
 */
export async function ensurePrismaClient(provider: PrismaProvider, directory: string): Promise<void> {
  const stamp = await stampOf(provider);
  if ((await stampIn(directory)) === stamp) return;
  const staging = `${directory}.staging-${randomUUID()}`;
  try {
    await generate(provider, staging);
    await writeFile(join(staging, STAMP_FILE), stamp);
    for (let attempt = 0; attempt < 3; attempt++) {
      if ((await stampIn(directory)) === stamp) return; // another process published the same client
      const stale = `${directory}.stale-${randomUUID()}`;
      await rename(directory, stale).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
      await rm(stale, { recursive: true, force: true });
      try {
        await rename(staging, directory);
        return;
      } catch (error) {
        if (!['ENOTEMPTY', 'EEXIST'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
      }
    }
    throw new Error(`could not publish the Prisma client generated for ${provider} in ${directory}`);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

const PROVIDERS: readonly PrismaProvider[] = ['postgresql', 'mysql', 'sqlite'];

/** The tests' client of every provider. */
export async function ensureTestPrismaClients(): Promise<void> {
  await Promise.all(PROVIDERS.map((provider) => ensurePrismaClient(provider, prismaClientDirectories.test(provider))));
}

/** Every client the Prisma tests and the example use; `npx tsx test/support/prisma/prisma-clients.ts` runs it (before tsc). */
export async function ensureAllPrismaClients(): Promise<void> {
  await Promise.all([ensureTestPrismaClients(), ensurePrismaClient('postgresql', prismaClientDirectories.example)]);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await ensureAllPrismaClients();
