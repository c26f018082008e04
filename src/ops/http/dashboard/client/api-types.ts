import type { DeadMessage, MessageHeaders } from '../../../../core/message.js';
import type { DestinationPause, OutboxStats, RelayGroup, RelayTopicPause, TopicLag, TopicPause } from '../../../../core/ports/outbox-operator.js';
import type { PendingMessage, PendingMessageDetail } from '../../../../core/ports/pending-messages.js';
import type { RelayHealth } from '../../../../core/relay-health.js';
import type { ShownBody } from '../../../pending-message-json.js';
import type { Wire } from './wire.js';

/** The answers of the admin API the page reads, typed from the server's own types as JSON carries them. */
export interface InfoAnswer {
  readonly version: string;
  readonly mutations: 'enabled' | 'disabled';
  readonly readRequiresToken: boolean;
  readonly payloads: 'shown' | 'hidden';
}

export type RelayAnswer = Wire<RelayHealth>;

export interface StatsAnswer {
  readonly at: string;
  readonly stats: Wire<OutboxStats>;
  readonly relay: RelayAnswer | null;
}

export interface RelaysAnswer {
  readonly self: string | null;
  readonly group: Wire<RelayGroup>;
}

/** One topic and destination of the lag read: the destination null for the relay's own publisher. */
export type LagEntry = Omit<Wire<TopicLag>, 'relayPause'> & { readonly relayPause: Wire<RelayTopicPause> | null };

export interface TopicsAnswer {
  readonly at: string;
  readonly topics: readonly LagEntry[];
}

export interface PausedTopicsAnswer {
  readonly paused: readonly Wire<TopicPause>[];
}

export interface PausedDestinationsAnswer {
  readonly paused: readonly Wire<DestinationPause>[];
}

export type DeadEntry = Wire<DeadMessage>;

export interface DeadAnswer {
  readonly dead: readonly DeadEntry[];
}

/** A pending message as `pendingMessageJson` lists it. */
export type PendingEntry = Wire<PendingMessage>;

/** A pending message's detail: its headers and body only when the server shows payloads. */
export type PendingDetail = Wire<Omit<PendingMessageDetail, 'content'>> &
  ({ readonly payload: 'hidden' } | { readonly payload: 'shown'; readonly headers: Wire<MessageHeaders>; readonly body: ShownBody });

export interface PendingAnswer {
  readonly pending: readonly PendingEntry[];
}

export interface PendingDetailAnswer {
  readonly message: PendingDetail;
}

/** What each refresh reads, by path. */
export interface ReadAnswers {
  '/api/stats': StatsAnswer;
  '/api/relays': RelaysAnswer;
  '/api/topics?limit=50': TopicsAnswer;
  '/api/topics/paused': PausedTopicsAnswer;
  '/api/destinations/paused': PausedDestinationsAnswer;
  '/api/dead?limit=100': DeadAnswer;
}

/** What each change answers, by path. */
export interface ChangeAnswers {
  '/api/topics/pause': { readonly paused: boolean };
  '/api/topics/resume': { readonly resumed: boolean };
  '/api/destinations/pause': { readonly paused: boolean };
  '/api/destinations/resume': { readonly resumed: boolean };
  '/api/dead/retry': { readonly retried: number };
  '/api/dead/purge': { readonly purged: number };
  '/api/pending/delete': { readonly deleted: number };
}
