/**
 * The architecture's rules (docs/design.md): no import circles, and no import from a lower layer to a higher one.
 * Layers, bottom up: core (no I/O) < stores, brokers (each a peer of the other) < adapters < consumer < ops.
 * A broker's folder holds its whole transport: its publisher sits in the brokers layer, and its consumer
 * (src/brokers/<broker>/consumer/) in the consumer layer, above the generic consumer it plugs into.
 */
const BROKER_CONSUMER = '^src/brokers/[^/]+/consumer/';
const under = (names) => `^src/(${names.join('|')})/`;
const rule = (name, from, to, comment) => ({ name, comment, severity: 'error', from, to: { path: to } });
const layer = (name, above) =>
  rule(`${name}-imports-no-higher-layer`, { path: `^src/${name}/` }, under(above), `src/${name} may not import from ${above.join(', ')}: they sit above it`);

module.exports = {
  forbidden: [
    { name: 'no-circular', comment: 'an import circle: split the shared part into a module both import', severity: 'error', from: {}, to: { circular: true } },
    layer('core', ['stores', 'brokers', 'adapters', 'consumer', 'ops']),
    layer('stores', ['brokers', 'adapters', 'consumer', 'ops']),
    rule(
      'brokers-import-no-higher-layer',
      { path: '^src/brokers/', pathNot: BROKER_CONSUMER },
      `${under(['stores', 'adapters', 'consumer', 'ops'])}|${BROKER_CONSUMER}`,
      "a broker's publisher may not import from stores, adapters, the consumer layer (a broker's consumer/ included) or ops",
    ),
    layer('adapters', ['brokers', 'consumer', 'ops']),
    rule(
      'consumer-imports-no-higher-layer',
      { path: '^src/consumer/' },
      `${under(['adapters', 'ops'])}|${BROKER_CONSUMER}`,
      "the generic consumer may not import a broker's consumer, adapters or ops",
    ),
    rule(
      'broker-consumers-import-no-higher-layer',
      { path: BROKER_CONSUMER },
      under(['adapters', 'ops']),
      "a broker's consumer may not import adapters or ops",
    ),
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
  },
};
