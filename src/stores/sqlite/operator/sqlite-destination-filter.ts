import { checkDestinationFilter } from '../../../core/pending-message-input.js';

/**
 * An optional filter on the destination, two positional parameters (`destinationParams`): whether to apply it, and
 * the destination, NULL matching the rows without one (the relay's own publisher).
 */
export const DESTINATION_IS = '(? = 0 OR destination IS ?)';

/** The two parameters of `DESTINATION_IS` (`undefined`: no filter; `null`: the rows without a destination). */
export function destinationParams(filter: string | null | undefined): [number, string | null] {
  const destination = checkDestinationFilter(filter);
  return destination === undefined ? [0, null] : [1, destination];
}
