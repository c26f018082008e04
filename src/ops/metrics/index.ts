/** `outboxer/metrics`: Prometheus metrics through prom-client (an optional peer dependency). docs/metrics.md. */
export { OutboxerMetrics } from './outboxer-metrics.js';
export { DEFAULT_COMMIT_TO_CONFIRM_BUCKETS, type OutboxerMetricsOptions } from './metrics-options.js';
export { HANDLER_DURATION_BUCKETS } from './consumer-counters.js';
export { MAX_TOPIC_LABELS, OTHER_TOPIC } from './topic-labels.js';
export { GAUGE_READ_TIMEOUT_MS } from './store-gauge-reader.js';
export type { HealthSource } from './relay-gauges.js';
export type { GaugeSource } from './store-gauge-reader.js';
