/**
 * The calls that go up the module tree: a control that changed something asks for a fresh poll; the pending
 * message's detail and delete ask the list to read again. dashboard-main.ts wires them once at start
 * (`wireRefresh`), so that no module imports a module that imports it. Until then both do nothing.
 */
export interface RefreshActions {
  /** Reads the figures again at once. */
  readonly poll: () => void;
  /** Reads the pending list again: at once when `asked`, else only if it was not read lately. */
  readonly loadPending: (asked: boolean) => void;
}

let pollNow: RefreshActions['poll'] = () => undefined;
let loadPendingNow: RefreshActions['loadPending'] = () => undefined;

export function wireRefresh(actions: RefreshActions): void {
  pollNow = actions.poll;
  loadPendingNow = actions.loadPending;
}

/** A fresh poll, after a control changed something. */
export function refreshNow(): void {
  pollNow();
}

/** The pending list read again at once, after a message left it. */
export function reloadPending(): void {
  loadPendingNow(true);
}
