import { testDialects } from '../support/dialects/index.js';
import { describeStoreGaugesConformance } from './store-gauges-conformance.js';

for (const dialect of testDialects) describeStoreGaugesConformance(dialect.gauges, { exactLimit: dialect.gaugeExactLimit });
