import { make } from './dom.js';

export const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
export const decimal = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });

export function age(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return unitPair(Math.floor(s / 60), 'm', s % 60, 's');
  if (s < 86400) return unitPair(Math.floor(s / 3600), 'h', Math.floor((s % 3600) / 60), 'm');
  return unitPair(Math.floor(s / 86400), 'd', Math.floor((s % 86400) / 3600), 'h');
}

function unitPair(major: number, majorUnit: string, minor: number, minorUnit: string): string {
  return `${major} ${majorUnit}${minor > 0 ? ` ${minor} ${minorUnit}` : ''}`;
}

/** A destination as people read it: its name, default for the relay's own publisher (null). */
export function destinationName(destination: string | null | undefined): string {
  return destination ?? 'default';
}

/** A lag entry's row: one per topic and destination (names have no spaces); the topic alone for the default one. */
export function lagKey(t: { readonly topic: string; readonly destination: string | null }): string {
  return t.destination ? `${t.topic} ${t.destination}` : t.topic;
}

/** How long ago an ISO time was, with the time itself as its title. */
export function since(iso: string): HTMLTimeElement {
  const time = make('time', '', age((Date.now() - Date.parse(iso)) / 1000));
  time.dateTime = iso;
  time.title = new Date(iso).toLocaleString();
  return time;
}

export function plural(count: number, word: string): string {
  return `${integer.format(count)} ${word}${count === 1 ? '' : 's'}`;
}
