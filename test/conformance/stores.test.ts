import { testDialects } from '../support/dialects/index.js';
import { describeStoreBodyConformance } from './store-body-conformance.js';
import { describeStoreConformance } from './store-conformance.js';

for (const dialect of testDialects) {
  describeStoreConformance(dialect.store);
  describeStoreBodyConformance(dialect.store);
}
