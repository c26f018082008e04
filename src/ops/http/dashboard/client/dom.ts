/** An element of the page by id, checked to be of the kind the code uses (any element when no kind is given). */
export function el(id: string): HTMLElement;
export function el<T extends Element>(id: string, kind: abstract new () => T): T;
export function el(id: string, kind: abstract new () => Element = HTMLElement): Element {
  const node = document.getElementById(id);
  if (!(node instanceof kind)) throw new Error(`The page has no ${kind.name} #${id}`);
  return node;
}

export function make<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function setText(id: string, text: string): void {
  const node = el(id);
  if (node.textContent !== text) node.textContent = text;
}

export function show(id: string, visible: boolean): void {
  el(id).hidden = !visible;
}

export function showError(id: string, error: { readonly message: string } | null): void {
  const node = el(id);
  node.hidden = !error;
  node.textContent = error ? error.message : '';
}

/** A row's cells, `count` new ones appended. */
export function cells(row: HTMLTableRowElement, count: number): HTMLCollectionOf<HTMLTableCellElement> {
  for (let i = 0; i < count; i++) row.appendChild(document.createElement('td'));
  return row.cells;
}

/** A row's cell that the row was made with. */
export function cell(row: HTMLTableRowElement, index: number): HTMLTableCellElement {
  const found = row.cells[index];
  if (found === undefined) throw new Error(`A row of ${row.parentElement?.id ?? 'a table'} has no cell ${index}`);
  return found;
}

/** A child that the code put there itself, checked to be of its kind. */
export function child<T extends Element>(parent: Element, index: number, kind: abstract new () => T): T {
  const found = parent.children[index];
  if (!(found instanceof kind)) throw new Error(`Expected a ${kind.name} at ${index} in ${parent.tagName}`);
  return found;
}

/** Keeps one row per key: new keys get a row, gone keys lose theirs, every row is updated in place. */
export function syncRows<T>(
  tbody: HTMLTableSectionElement,
  items: readonly T[],
  keyOf: (item: T) => string,
  create: (item: T) => HTMLTableRowElement,
  update: (row: HTMLTableRowElement, item: T) => void,
): void {
  const existing = new Map<string | undefined, HTMLTableRowElement>();
  for (const row of tbody.rows) existing.set(row.dataset.key, row);
  items.forEach((item, index) => {
    const key = keyOf(item);
    let row = existing.get(key);
    if (!row) {
      row = create(item);
      row.dataset.key = key;
    }
    existing.delete(key);
    update(row, item);
    if (tbody.rows[index] !== row) tbody.insertBefore(row, tbody.rows[index] ?? null);
  });
  existing.forEach((row) => row.remove());
}
