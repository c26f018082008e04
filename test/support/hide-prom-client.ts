/**
 * Given to node with `--import` (after tsx), makes `prom-client` unresolvable, as in an installation without that
 * optional peer: any import of it fails with ERR_MODULE_NOT_FOUND, as Node's own resolver fails.
 */
import { register } from 'node:module';

const hook = `
export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'prom-client' || specifier.startsWith('prom-client/')) {
    const error = new Error("Cannot find package 'prom-client' imported from " + context.parentURL);
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return nextResolve(specifier, context);
}`;

register(`data:text/javascript,${encodeURIComponent(hook)}`);
