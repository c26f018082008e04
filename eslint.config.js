// ESLint for outboxer: typescript-eslint's strict and stylistic type-checked rules over every TypeScript file
// that tsconfig.json includes (src, test, examples, bench, chaos, scripts). A rule is turned off only where it
// contradicts a deliberate style of the code base; each says why.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: [
      'dist/',
      'coverage/',
      'node_modules/',
      'bench/results/',
      '.chaos/',
      '.prof/',
      'test/support/prisma/generated/',
      'examples/orms/generated/',
      'src/ops/http/dashboard/dashboard-script.generated.ts',
    ],
  },
  js.configs.recommended,
  tseslint.configs.strictTypeChecked,
  tseslint.configs.stylisticTypeChecked,
  {
    languageOptions: {
      // the programs `npm run typecheck` builds: the whole tree, and the dashboard's browser code (DOM lib)
      parserOptions: { project: ['./tsconfig.json', './src/ops/http/dashboard/client/tsconfig.json'], tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // With verbatimModuleSyntax, `import { type A }` keeps `import 'mod'` at run time: a type-only import would
      // load an optional peer (pg, amqplib, ...) that the user may not have installed.
      '@typescript-eslint/no-import-type-side-effects': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/consistent-type-exports': ['error', { fixMixedExportsWithInlineTypeSpecifier: true }],
      // Numbers, booleans and null/undefined print as expected in messages; objects and unknown values still must not.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true, allowNullish: true }],
      // Driver errors arrive as `unknown` and are passed on as they are; `only-throw-error` still checks what we throw.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true, allowThrowingAny: true }],
      // `String(value)` is how the code turns driver columns and foreign values typed `unknown` into text; once null
      // is ruled out, `unknown` narrows to `{}`, which this rule takes for a plain object. Template literals stay checked.
      '@typescript-eslint/no-base-to-string': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // The code writes `(x) => doSomething(x)` for callbacks and `return settle(attempt, error)` to settle and leave.
      '@typescript-eslint/no-confusing-void-expression': 'off',
      // `||` on strings is deliberate where an empty string means "not given" (`issue.path.join('.') || '(root)'`).
      '@typescript-eslint/prefer-nullish-coalescing': ['error', { ignorePrimitives: { string: true } }],
      // The Standard Schema interface is declared as its spec publishes it, with a `declare namespace`.
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
      // Overloads are ordered on purpose: the last one steers inference (`new Inbox(store, ...)` infers `tx` from it).
      '@typescript-eslint/unified-signatures': 'off',
      // Headers are plain records: a reserved header name (a constant) is deleted from the copy of the user's headers.
      '@typescript-eslint/no-dynamic-delete': 'off',
      // `async (x) => void (await work(x))` is the code's way to discard a result.
      '@typescript-eslint/no-meaningless-void-operator': 'off',
      // Options, rows and messages come from JavaScript callers, drivers and the wire: the code re-checks and
      // coerces values at run time (`typeof x !== 'string'`, `Number(row.n)`) whatever their declared type says.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      '@typescript-eslint/no-unnecessary-type-conversion': 'off',
      // `async` without `await` is deliberate: it implements Promise-returning ports and turns a throw into a rejection.
      '@typescript-eslint/require-await': 'off',
      // Ports are interfaces of closures (CliIo, SqlExecutor, executors of drivers), passed around unbound by design;
      // optional store methods are taken off the store and then `.call`ed or `.bind`ed.
      '@typescript-eslint/unbound-method': 'off',
      // Prefers `x!`, which the code avoids (no-non-null-assertion): it narrows with a check or says the type with `as`.
      '@typescript-eslint/non-nullable-type-assertion-style': 'off',
      // The code rejects control characters in names, keys and headers: the regular expressions match them on purpose.
      'no-control-regex': 'off',
    },
  },
  {
    // Tests, benchmarks, chaos runs and examples assert what they have just set up (`x!`), and pass fakes, object
    // literals and no-op callbacks where a port or a driver's class is expected.
    files: ['test/**', 'bench/**', 'chaos/**', 'examples/**', 'scripts/**'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-empty-function': 'off',
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
    },
  },
  {
    files: ['test/**'],
    rules: {
      // The suites cast stores (`store as unknown as StoreForOutbox<OutboxTransaction>`) to choose `Outbox`'s type
      // parameter; the rule checks the argument against the parameter as inferred from that very cast, and its fix breaks the build.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // A catch callback typed with the fields the test reads (`(error: { code?: string }) => error.code`) is the assertion.
      '@typescript-eslint/use-unknown-in-catch-callback-variable': 'off',
      // The lease model and the harnesses spell out `row === undefined || row.owner !== relay` as the protocol reads.
      '@typescript-eslint/prefer-optional-chain': 'off',
      // Tests read JSON, driver rows and broker frames as `any` to assert on them; the rest of the code may not.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  {
    // The README's shutdown handler, `process.once('SIGTERM', async () => ...)`, as the docs show it: a shutdown that
    // fails rejects, unhandled, and the process exits 1, which is what a service manager should see.
    files: ['examples/**'],
    rules: {
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // dependency-cruiser reads a CommonJS config (.dependency-cruiser.cjs)
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
);
