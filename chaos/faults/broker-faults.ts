import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { FaultContext } from '../scenario.js';

const run = promisify(execFile);

/** SIGKILL of the scenario's private nats-server, restarted on the same port and store after `downMs`. */
export async function restartNats(ctx: FaultContext, downMs: number): Promise<void> {
  const nats = ctx.env.nats;
  if (nats === undefined) throw new Error('restartNats needs a scenario on a private nats-server');
  const fault = ctx.log.begin('nats-server-restart');
  await nats.kill();
  await ctx.sleep(downMs);
  await nats.start();
  ctx.log.heal(fault);
}

/** `rabbitmqctl stop_app` / `start_app` of the shared broker: full set only, which must run alone. */
export async function restartRabbitMq(ctx: FaultContext, downMs: number): Promise<void> {
  const fault = ctx.log.begin('rabbitmq-stop-start-app');
  await run('rabbitmqctl', ['stop_app']);
  await ctx.sleep(downMs);
  await run('rabbitmqctl', ['start_app']);
  await run('rabbitmqctl', ['await_startup']);
  ctx.log.heal(fault);
}
