import type { ChangeAnswers } from './api-types.js';
import { state } from './dashboard-state.js';
import { el, make, setText, show } from './dom.js';
import { refreshNow } from './refresh-hooks.js';
import { messageOf, request } from './request.js';

/** A button that changes something: enabled by the admin token only (data-mutation). */
export function button(label: string, className: string, onClick: (node: HTMLButtonElement) => void): HTMLButtonElement {
  const node = control(label, className, onClick);
  node.dataset.mutation = '';
  allowMutation(node, canMutate());
  return node;
}

/** A button that only shows or reads: always enabled. */
export function control(label: string, className: string, onClick: (node: HTMLButtonElement) => void): HTMLButtonElement {
  const node = make('button', className ? `button ${className}` : 'button', label);
  node.type = 'button';
  node.addEventListener('click', () => onClick(node));
  return node;
}

export function canMutate(): boolean {
  return !!state.info && state.info.mutations === 'enabled' && state.token !== '';
}

export function updateControls(): void {
  const allowed = canMutate();
  document.querySelectorAll<HTMLButtonElement>('button[data-mutation]').forEach((node) => allowMutation(node, allowed));
  let notice = '';
  if (state.info?.mutations === 'disabled')
    notice = 'Changes are disabled: this server was started without an admin token (--admin-token or OUTBOXER_ADMIN_TOKEN). The page is read-only.';
  else if (state.readsNeedToken && !state.token) notice = 'This server needs the admin token to show anything: enter it above.';
  setText('notice', notice);
  show('notice', notice !== '');
}

/** A change control is enabled by the token; one with data-idle (its reason) has nothing to act on yet, and says so. */
export function allowMutation(node: HTMLButtonElement, allowed: boolean): void {
  const idle = node.dataset.idle;
  node.disabled = !allowed || !!idle;
  node.title = !allowed ? mutationHint() : idle || '';
}

function mutationHint(): string {
  if (!state.info) return 'Waiting for the server';
  if (state.info.mutations === 'disabled') return 'Changes are disabled on this server';
  return 'Enter the admin token to make changes';
}

function flash(message: string, failed: boolean): void {
  const node = el('flash');
  node.textContent = message;
  node.classList.toggle('failed', failed);
}

/** One POST to the API as a change (see `change`); `describe` says what its answer means. */
export function mutate<P extends keyof ChangeAnswers>(
  node: HTMLButtonElement,
  path: P,
  body: unknown,
  describe: (result: ChangeAnswers[P]) => string,
): Promise<void> {
  return change(node, () => request<ChangeAnswers[P]>('POST', path, body), describe);
}

/** A change the operator asked for (send makes its requests): its button disabled meanwhile, the outcome flashed, then the page read again. */
export function change<T>(node: HTMLButtonElement, send: () => Promise<T>, describe: (result: T) => string): Promise<void> {
  if (!canMutate()) return Promise.resolve();
  node.disabled = true;
  return send()
    .then(
      (result) => flash(describe(result), false),
      (error: unknown) => flash(messageOf(error), true),
    )
    .then(() => {
      updateControls();
      refreshNow();
    });
}
