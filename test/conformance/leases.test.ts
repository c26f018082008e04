import { testDialects } from '../support/dialects/index.js';
import { describeLeaseConformance } from './lease-conformance.js';

for (const dialect of testDialects) describeLeaseConformance(dialect.lease);
