import type { RouteContext } from '../route.js';

/** Most ids named in one audit line. */
const MAX_AUDITED_IDS = 100;

/** One info line per change: what was asked, from which address, and how many rows it changed. */
export function audit(context: RouteContext, action: string, message: string, fields: Record<string, unknown>): void {
  const ids = fields.ids;
  context.options.logger.info(
    {
      audit: true,
      action,
      remoteAddress: context.remoteAddress ?? null,
      ...fields,
      ...(Array.isArray(ids) ? { ids: ids.slice(0, MAX_AUDITED_IDS) } : {}),
    },
    message,
  );
}
