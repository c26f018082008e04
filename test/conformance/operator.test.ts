import { testDialects } from '../support/dialects/index.js';
import { describeOperatorConformance } from './operator-conformance.js';
import { describePendingConformance } from './pending-conformance.js';

for (const dialect of testDialects) {
  describeOperatorConformance(dialect.operator);
  describePendingConformance(dialect.operator);
}
