import type { ChangeAnswers } from './api-types.js';
import { canMutate, change } from './controls.js';
import { integer, plural } from './format.js';
import { closeDetail } from './pending-detail.js';
import { pending, pendingUnsupported } from './pending-state.js';
import { reloadPending } from './refresh-hooks.js';
import { request } from './request.js';

const PENDING_DELETE_MAX = 400;

/** Deletes after a confirmation, at most 400 ids a request; then the counts and the list are read again. */
export function deletePending(node: HTMLButtonElement, ids: readonly string[]): void {
  if (!canMutate() || ids.length === 0) return;
  const what = plural(ids.length, 'pending message');
  const one = ids.length === 1;
  const warning = `Delete ${what}? ${one ? 'It' : 'They'} will not be published, unless a relay is publishing ${one ? 'it' : 'one'} right now (then it goes out once). Later messages of the same key will go on.`;
  if (!window.confirm(warning)) return;
  let deleted = 0;
  const send = async (): Promise<void> => {
    try {
      for (let i = 0; i < ids.length; i += PENDING_DELETE_MAX) {
        const batch = ids.slice(i, i + PENDING_DELETE_MAX);
        const r = await request<ChangeAnswers['/api/pending/delete']>('POST', '/api/pending/delete', { ids: batch });
        deleted += r.deleted;
      }
    } catch (error) {
      pendingUnsupported(error);
      if (deleted > 0 && error instanceof Error) error.message = `Deleted ${integer.format(deleted)} of ${what}, then: ${error.message}`;
      throw error;
    }
  };
  const describe = (): string =>
    `Deleted ${integer.format(deleted)} of ${what}${deleted < ids.length ? ': the others were no longer pending (published, parked dead or deleted already).' : '.'}`;
  void change(node, send, describe).then(() => {
    for (const id of ids) pending.selected.delete(id);
    if (ids.includes(pending.shown)) closeDetail();
    reloadPending();
  });
}
