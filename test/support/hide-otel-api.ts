/**
 * Given to node with `--import` (after tsx), makes `@opentelemetry/api` unresolvable, as in an installation without
 * that optional peer: any import of it fails with ERR_MODULE_NOT_FOUND, as Node's own resolver fails.
 */
import { register } from 'node:module';

const hook = `
export async function resolve(specifier, context, nextResolve) {
  if (specifier === '@opentelemetry/api' || specifier.startsWith('@opentelemetry/api/')) {
    const error = new Error("Cannot find package '@opentelemetry/api' imported from " + context.parentURL);
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return nextResolve(specifier, context);
}`;

register(`data:text/javascript,${encodeURIComponent(hook)}`);
