import { ProxyTracerProvider, trace, type TracerProvider } from '@opentelemetry/api';

/**
 * Exports the spans an SDK still buffers (a batch processor's queue): call it before the process exits. The
 * global provider is used unless one is given; a provider without `forceFlush` (none registered) is a no-op.
 */
export async function flushTracing(provider: TracerProvider = trace.getTracerProvider()): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the global provider is this proxy until @opentelemetry/api 2 drops it
  const real = provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider;
  const flush = (real as { forceFlush?: () => Promise<void> }).forceFlush;
  if (typeof flush === 'function') await flush.call(real);
}
