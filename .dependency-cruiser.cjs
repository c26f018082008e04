/**
 * The architecture's rules (docs/design.md): no import circles, and no import from a lower layer to a higher one.
 * Layers, bottom up: core (no I/O) < stores, publishers (each a peer of the other) < adapters < consumer < ops.
 */
const layer = (name, above) => ({
  name: `${name}-imports-no-higher-layer`,
  comment: `src/${name} may not import from ${above.join(', ')}: they sit above it`,
  severity: 'error',
  from: { path: `^src/${name}/` },
  to: { path: `^src/(${above.join('|')})/` },
});

module.exports = {
  forbidden: [
    { name: 'no-circular', comment: 'an import circle: split the shared part into a module both import', severity: 'error', from: {}, to: { circular: true } },
    layer('core', ['stores', 'publishers', 'adapters', 'consumer', 'ops']),
    layer('stores', ['publishers', 'adapters', 'consumer', 'ops']),
    layer('publishers', ['stores', 'adapters', 'consumer', 'ops']),
    layer('adapters', ['publishers', 'consumer', 'ops']),
    layer('consumer', ['adapters', 'ops']),
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
  },
};
