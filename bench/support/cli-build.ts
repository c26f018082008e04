import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** The `outboxer` executable built from this checkout's sources, in a temporary directory removed by `remove()`. */
export interface CliBuild {
  /** The entry point, as `node <main>` runs it: package.json's `bin`. */
  readonly main: string;
  /**
   * Transpiles one more file of this checkout (a bench process such as the ideal relay) beside the build, where its
   * `../../src/…` imports reach the transpiled sources; returns its entry point, as `node <path>` runs it.
   */
  add(file: string): string;
  remove(): void;
}

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourcesUnder(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * Transpiles `src/` file by file, as `npm run build` emits it (no type check: `npm run typecheck` does that),
 * so relay processes run plain JavaScript like a deployment, not through tsx, whose loader thread and
 * compiler would count in their memory. Fresh for every run: a `dist/` left by `npm ci` can be older than
 * the sources. node_modules is linked, so the packages resolve as they do in the checkout.
 */
export function buildCli(root = process.cwd()): CliBuild {
  const out = mkdtempSync(join(tmpdir(), 'outboxer-bench-cli-'));
  const compilerOptions: ts.CompilerOptions = { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022, verbatimModuleSyntax: true };
  const transpile = (file: string, target: string) => {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions, fileName: file }).outputText);
  };
  const src = resolve(root, 'src');
  for (const file of sourcesUnder(src)) transpile(file, join(out, 'dist', relative(src, file)).replace(/\.ts$/, '.js'));
  copyFileSync(resolve(root, 'package.json'), join(out, 'package.json'));
  symlinkSync(resolve(root, 'node_modules'), join(out, 'node_modules'), 'dir');
  symlinkSync(join(out, 'dist'), join(out, 'src'), 'dir');
  return {
    main: join(out, 'dist', 'ops', 'cli', 'main.js'),
    add(file: string) {
      const target = join(out, relative(root, resolve(root, file))).replace(/\.ts$/, '.js');
      transpile(resolve(root, file), target);
      return target;
    },
    remove: () => rmSync(out, { recursive: true, force: true }),
  };
}
