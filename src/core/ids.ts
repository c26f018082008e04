import { v7 as uuidv7 } from 'uuid';

/** A new message id: a UUIDv7, time-ordered and unique, kept for the message's whole life. */
export function newMessageId(): string {
  return uuidv7();
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}
