import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RoleConfig } from './spec.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface RoleExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly t: number;
}

/**
 * One role as its own OS process (`node --import tsx chaos/roles/<role>.ts`). Its configuration comes
 * in CHAOS_CONFIG, its secrets in the environment; stdout and stderr go straight to files, so that a
 * SIGKILL loses nothing the process had written.
 */
export class RoleProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<RoleExit>;
  exit: RoleExit | undefined;

  constructor(
    readonly name: string,
    config: RoleConfig,
    secrets: Readonly<Record<string, string>>,
    outDir: string,
  ) {
    const out = openSync(join(outDir, `${name}.out`), 'a');
    const err = openSync(join(outDir, `${name}.err`), 'a');
    const env: NodeJS.ProcessEnv = { ...process.env, ...secrets, CHAOS_CONFIG: JSON.stringify(config) };
    this.child = spawn(process.execPath, ['--import', 'tsx', join('chaos', 'roles', `${config.role}.ts`)], { cwd: ROOT, env, stdio: ['ignore', out, err] });
    closeSync(out);
    closeSync(err);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal, t: Date.now() };
        resolve(this.exit);
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  signal(signal: NodeJS.Signals): void {
    if (this.running) this.child.kill(signal);
  }

  /** Sends `signal`, then SIGKILL if the process is still there after `graceMs`. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 15_000): Promise<RoleExit> {
    if (!this.running) return this.exit as RoleExit;
    this.child.kill('SIGCONT');
    this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
