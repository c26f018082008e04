import { testDialects } from '../support/dialects/index.js';
import { describeInboxConformance } from './inbox-conformance.js';

for (const dialect of testDialects) dialect.withInbox(describeInboxConformance);
