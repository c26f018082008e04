import { definePublisher } from './cli-publisher.js';

export const consolePublisher = definePublisher({
  name: 'console',
  summary: 'one line per message on stdout, for development',
  flags: [],
  async create() {
    const { createConsolePublisher } = await import('../../../brokers/console/index.js');
    return createConsolePublisher();
  },
});
