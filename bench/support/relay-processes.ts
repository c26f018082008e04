import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { processCpu } from '../measure/process-cpu.js';

/** A relay logs this line (JSON, on stderr) once its start checks passed and it begins relaying. */
const READY = '"msg":"outboxer relay starting"';
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

export interface RelayProcess {
  readonly pid: number;
  /** When its ready line was read (`performance.now()`). */
  readonly readyAt: number;
  /** Resident memory now and at its peak (VmRSS, VmHWM of /proc/<pid>/status), in MB. */
  memory(): { rssMb: number; peakMb: number };
  /** Its CPU time so far (user + system, all threads), in µs from /proc/<pid>/stat; NaN once it exited. */
  cpu(): number;
  /** The last 8,000 characters it wrote to stderr. */
  stderr(): string;
  /** SIGTERM (the relay's graceful stop), then its exit code; SIGKILL and null if it does not stop in time. */
  stop(): Promise<number | null>;
  /** SIGKILL (a crash: no leave, no release), then resolves once it exited. */
  kill(): Promise<void>;
}

function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

/**
 * Starts `node <main> relay <args>`, one relay process as a deployment runs it (`main`: see cli-build.ts);
 * resolves once it logged that it started.
 */
export function startRelayProcess(main: string, args: readonly string[]): Promise<RelayProcess> {
  return startNodeProcess([main, 'relay', ...args], READY, 'outboxer relay');
}

/**
 * Starts `node <args>` and resolves once its stderr showed `ready`; `label` names it in errors. With
 * `BENCH_CPU_PROF_DIR` set, each process writes a V8 CPU profile there when it exits (Node refuses `--cpu-prof` in
 * `NODE_OPTIONS`); a profiled process runs slower, so its rates are not comparable.
 */
export async function startNodeProcess(nodeArgs: readonly string[], ready: string, label: string): Promise<RelayProcess> {
  const profileDir = process.env.BENCH_CPU_PROF_DIR;
  const profiling = profileDir === undefined || profileDir === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`];
  const child = spawn(process.execPath, [...profiling, ...nodeArgs], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let readyAt = Number.NaN;
  let isReady: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (isReady = resolve));
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8_000);
    if (Number.isNaN(readyAt) && stderr.includes(ready)) {
      readyAt = performance.now();
      isReady();
    }
  });
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    started.then(() => 'ready' as const),
    exited(child).then((code) => `exited with code ${code}` as const),
    new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`not started after ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS))),
  ]);
  clearTimeout(timer);
  if (outcome !== 'ready' || child.pid === undefined) {
    child.kill('SIGKILL');
    // The CLI says what is wrong in a line of its own (`outboxer: ...`) or a JSON log line, then perhaps its help.
    const said = stderr.split('\n').filter((line) => line.startsWith('outboxer') || line.startsWith('{'));
    throw new Error(`${label} ${outcome}: ${said.slice(-3).join(' | ') || stderr.slice(0, 300)}`);
  }
  const pid = child.pid;
  return {
    pid,
    readyAt,
    memory: () => memoryOf(pid),
    cpu: () => processCpu(pid),
    stderr: () => stderr,
    async stop() {
      const exit = exited(child);
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      const code = await exit;
      clearTimeout(killer);
      return code;
    },
    async kill() {
      const exit = exited(child);
      child.kill('SIGKILL');
      await exit;
    },
  };
}
