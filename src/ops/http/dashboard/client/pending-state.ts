import type { PendingEntry } from './api-types.js';
import { show } from './dom.js';
import { statusOf } from './request.js';

/**
 * The pending messages panel: a filtered list, read when the operator asks (a filter, Refresh, a topic of the lag
 * table, a delete) and by itself only when the panel first shows or the tab is shown again, at most every 10 s;
 * never on the 2 s refresh, which only moves the ages and due times it shows. No server cache shares its query.
 */
export const pending = {
  tried: 0,
  listedAt: 0,
  path: '',
  loading: false,
  again: false,
  unsupported: false,
  messages: new Map<string, PendingEntry>(),
  selected: new Set<string>(),
  shown: '',
};

/** A store without the pending-message methods (501): the panel goes, for good. */
export function pendingUnsupported(error: unknown): boolean {
  if (statusOf(error) !== 501) return false;
  pending.unsupported = true;
  show('pending-panel', false);
  return true;
}
