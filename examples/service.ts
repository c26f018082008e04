/**
 * One service embedding both halves: the README's consumer and producer (the very files the README shows),
 * paying orders until SIGTERM. Each half shuts itself down on SIGTERM; the process then exits on its own.
 *
 *   DATABASE_URL=postgres://… AMQP_URL=amqp://… node --import tsx examples/service.ts
 */
import './consumer.js';
import { payOrder } from './quickstart.js';

let stopping = false;
process.once('SIGTERM', () => {
  stopping = true; // stop taking work first, as an HTTP server would stop accepting requests
});
for (let orderId = 1; !stopping; orderId++) {
  await payOrder(orderId, `request-${orderId}`);
  await new Promise((resolve) => setTimeout(resolve, 20)); // the pace of incoming requests
}
