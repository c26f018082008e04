import { createConnection } from 'node:net';

const endpoints = [
  { name: 'PostgreSQL', port: 5432 },
  { name: 'RabbitMQ', port: 5672 },
  { name: 'NATS', port: 4222 },
  { name: 'MariaDB', port: 3306 },
  { name: 'Redis', port: 6379 },
  { name: 'Mosquitto (MQTT)', port: 1883 },
  { name: 'the Pub/Sub emulator', port: 8085 },
];

function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setTimeout(2000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Integration tests need the real services: fail fast and say which is down (never skip). */
export default async function setup(): Promise<void> {
  const down: string[] = [];
  for (const endpoint of endpoints) {
    if (!(await reachable(endpoint.port))) down.push(`${endpoint.name} (127.0.0.1:${endpoint.port})`);
  }
  if (down.length > 0) {
    throw new Error(`local services down: ${down.join(', ')}; start them with \`bash .ci/services\``);
  }
}
