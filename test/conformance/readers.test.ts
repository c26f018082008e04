import { testDialects } from '../support/dialects/index.js';
import { describeReaderConformance } from './reader-conformance.js';

for (const dialect of testDialects) describeReaderConformance(dialect.reader);
