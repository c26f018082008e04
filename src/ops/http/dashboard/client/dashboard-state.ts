import type { InfoAnswer } from './api-types.js';

export const POLL_MS = 2000;
export const TOPICS_POLL_MS = 10000;
export const SPARK_POINTS = 30;
export const OWNER_COLOURS = 10;

/** What the page holds between refreshes. The admin token lives here only: no cookie, no storage. */
export interface DashboardState {
  token: string;
  info: InfoAnswer | null;
  readsNeedToken: boolean;
  last: { readonly at: number; readonly published: number } | null;
  rates: number[];
  timer: ReturnType<typeof setTimeout> | undefined;
  polling: boolean;
  again: boolean;
  deadTotal: number;
  listedDead: number;
  paused: Set<string>;
  pausedDestinations: number;
  /** Relay holds of the lag read, by lag row (`lagKey`). */
  held: Map<string, unknown>;
  heldCount: number;
}

export const state: DashboardState = {
  token: '',
  info: null,
  readsNeedToken: false,
  last: null,
  rates: [],
  timer: undefined,
  polling: false,
  again: false,
  deadTotal: 0,
  listedDead: 0,
  paused: new Set(),
  pausedDestinations: 0,
  held: new Map(),
  heldCount: 0,
};
