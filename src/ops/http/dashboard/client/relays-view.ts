import type { RelaysAnswer } from './api-types.js';
import { OWNER_COLOURS } from './dashboard-state.js';
import { cell, cells, child, el, make, setText, show, syncRows } from './dom.js';
import { decimal, integer, plural, since } from './format.js';

type Member = RelaysAnswer['group']['relays'][number];

/** The partition grid (a colour per relay) and the live relays of the table. */
export function renderRelays(data: RelaysAnswer): void {
  const group = data.group;
  const colour = new Map<string, number>();
  group.relays.forEach((relay, i) => colour.set(relay.id, i % OWNER_COLOURS));
  const owner = new Map<number, Member>();
  for (const relay of group.relays) for (const p of relay.partitions) owner.set(p, relay);
  const grid = el('partition-grid');
  while (grid.children.length > group.partitionCount) grid.lastElementChild?.remove();
  while (grid.children.length < group.partitionCount) grid.appendChild(make('span', 'cell'));
  for (let p = 0; p < group.partitionCount; p++) {
    const holder = owner.get(p);
    const square = child(grid, p, HTMLElement);
    const className = holder ? `cell o${colour.get(holder.id)}${holder.leaving ? ' leaving' : ''}` : 'cell unowned';
    if (square.className !== className) square.className = className;
    square.title = `Partition ${p}: ${holder ? holder.name : 'unowned'}`;
  }
  const unowned = group.unowned.length;
  setText('unowned-pill', plural(unowned, 'unowned partition'));
  show('unowned-pill', unowned > 0);
  grid.setAttribute('aria-label', `${plural(group.partitionCount, 'partition')}, ${unowned} unowned, held by ${plural(group.relays.length, 'relay')}`);
  syncRows(
    el('relays-body', HTMLTableSectionElement),
    group.relays,
    (r) => r.id,
    (relay) => {
      const row = document.createElement('tr');
      cells(row, 4);
      cell(row, 0).append(make('span', 'swatch'), make('span', 'name'));
      if (relay.id === data.self) cell(row, 0).appendChild(make('span', 'self', 'this process'));
      cell(row, 1).className = 'num';
      cell(row, 2).className = 'num';
      return row;
    },
    (row, relay) => {
      const swatch = `swatch o${colour.get(relay.id)}`;
      const first = child(cell(row, 0), 0, HTMLElement);
      if (first.className !== swatch) first.className = swatch;
      child(cell(row, 0), 1, HTMLElement).textContent = relay.name;
      cell(row, 0).title = `relay id ${relay.id}`;
      cell(row, 1).textContent = integer.format(relay.partitions.length);
      cell(row, 2).textContent = `${decimal.format(Math.max(0, relay.expiresInMs) / 1000)} s`;
      const status = cell(row, 3);
      if (relay.trouble) {
        status.replaceChildren(make('span', '', 'broker trouble for '), since(relay.trouble.since), make('span', 'trouble', relay.trouble.reason));
        status.className = 'state-bad';
        status.title = relay.trouble.reason;
      } else {
        status.textContent = relay.leaving ? 'leaving' : 'active';
        status.className = relay.leaving ? 'state-warn' : 'state-ok';
        status.title = '';
      }
    },
  );
  show('relays-empty', group.relays.length === 0);
  const troubled = group.relays.filter((r) => !!r.trouble).length;
  setText('trouble-pill', `${plural(troubled, 'relay')} cannot reach ${troubled === 1 ? 'its' : 'their'} broker`);
  show('trouble-pill', troubled > 0);
}
