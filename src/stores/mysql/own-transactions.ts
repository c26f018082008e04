/** The executors `fromMysqlPool(...).transaction` hands out, while their transaction runs. */
const openOwnTransactions = new WeakSet<object>();

/** Runs `work` with `tx` vouched for as an open transaction of ours (the store then needs no probe). */
export async function withOwnTransaction<T>(tx: object, work: () => Promise<T>): Promise<T> {
  openOwnTransactions.add(tx);
  try {
    return await work();
  } finally {
    openOwnTransactions.delete(tx);
  }
}

export function isOwnOpenTransaction(tx: object): boolean {
  return openOwnTransactions.has(tx);
}
