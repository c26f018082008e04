/**
 * The calls that go up the module tree: a control that changed something asks for a fresh poll; the pending
 * message's detail and delete ask the list to read again. dashboard-main.ts wires them at start, so that no module
 * imports a module that imports it.
 */
export const refreshHooks = {
  poll: (): void => undefined,
  loadPending: (_asked: boolean): void => undefined,
};
