import type { DestinationFilter } from '../../core/ports/outbox-operator.js';
import { destinationFilter, destinationFilterFault } from '../destination-filter.js';
import { OpsHttpError } from './ops-http-error.js';
import { queryText, type QueryValues } from './query-parameters.js';

/**
 * The `destination` query parameter of a list (`/api/dead`, `/api/pending`) as the ports' filter: none when
 * absent, `null` for `default` (the messages stored without one). A name that is not a destination's is a 400
 * `OUTBOXER_INVALID_QUERY` led by `OUTBOXER_INVALID_DESTINATION`, as the CLI refuses `--destination`.
 */
export function destinationQuery(query: QueryValues): DestinationFilter {
  const name = queryText(query, 'destination');
  if (name === undefined) return {};
  const fault = destinationFilterFault(name);
  if (fault !== undefined) throw new OpsHttpError(400, 'OUTBOXER_INVALID_QUERY', `OUTBOXER_INVALID_DESTINATION: query parameter destination: ${fault}`);
  return { destination: destinationFilter(name) };
}
