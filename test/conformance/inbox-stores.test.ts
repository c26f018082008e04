import { testDialects } from '../support/dialects/index.js';
import { describeInboxBatchConformance } from './inbox-batch-conformance.js';
import { describeInboxConformance } from './inbox-conformance.js';

for (const dialect of testDialects) {
  dialect.withInbox(describeInboxConformance);
  dialect.withInbox(describeInboxBatchConformance);
}
