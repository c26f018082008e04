import { destinationName } from '../core/destinations.js';
import { DEFAULT_DESTINATION, destinationFault } from '../core/message-rules.js';
import { checkDestinationFilter } from '../core/pending-message-input.js';

/**
 * How the CLI, the admin API and the dashboard name a destination: its name, and `default` for the rows stored
 * without one (the relay's own publisher; `null` in the ports).
 */

/** What is wrong with a destination an operator named (`--destination`, `?destination=`), or undefined. */
export function destinationFilterFault(name: string): string | undefined {
  const fault = destinationFault(name);
  return fault === undefined ? undefined : `${fault}; \`${DEFAULT_DESTINATION}\` names the messages stored without one`;
}

/** The filter the ports take for a name an operator gave: `null` for `default`, else the name. */
export function destinationFilter(name: string): string | null {
  return checkDestinationFilter(name) ?? null;
}

/** A row's destination as people read it: `default` for none. */
export function shownDestination(destination: string | null | undefined): string {
  return destinationName({ destination: destination ?? null });
}
