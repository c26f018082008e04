import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root: the CLI runs from source through tsx, as `node --import tsx src/ops/cli/main.ts`. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAIN = 'src/ops/cli/main.ts';

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The test process's environment without any OUTBOXER_* variable, plus `extra`. */
export function cliEnv(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('OUTBOXER_')) env[name] = value;
  }
  return { ...env, ...extra };
}

/** A running CLI process with its output collected as it comes. */
export class CliProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<CliResult>;
  #listeners = new Set<() => void>();

  /**
   * Runs `launch.script` (relative to the repository root; the CLI by default, or an example) from source
   * with tsx, or `launch.command` (an installed bin, an entrypoint script) in `launch.cwd`.
   */
  constructor(
    args: readonly string[],
    env: NodeJS.ProcessEnv,
    launch: { readonly script: string } | { readonly command: string; readonly cwd: string } = { script: MAIN },
  ) {
    this.child =
      'script' in launch
        ? spawn(process.execPath, ['--import', 'tsx', launch.script, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
        : spawn(launch.command, [...args], { cwd: launch.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      this.#notify();
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
      this.#notify();
    });
    this.exited = new Promise((resolve, reject) => {
      this.child.once('error', reject);
      this.child.once('close', (code, signal) => {
        resolve({ code, signal, stdout: this.stdout, stderr: this.stderr });
        this.#notify();
      });
    });
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }

  /** Resolves once `condition` holds on the output so far; rejects on exit or after `timeoutMs`. */
  waitForOutput(condition: (out: { stdout: string; stderr: string }) => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const finish = (error?: Error) => {
        clearTimeout(timer);
        this.#listeners.delete(check);
        if (error === undefined) resolve();
        else reject(error);
      };
      const check = () => {
        if (condition(this)) finish();
        else if (!this.running) finish(new Error(`CLI exited (${this.child.exitCode ?? this.child.signalCode}) before ${what}\nstderr:\n${this.stderr}`));
      };
      const timer = setTimeout(() => finish(new Error(`timed out after ${timeoutMs} ms waiting for ${what}\nstderr:\n${this.stderr}`)), timeoutMs);
      this.#listeners.add(check);
      check();
    });
  }

  /** Sends a signal and waits (bounded) for the exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 20_000): Promise<CliResult> {
    this.child.kill(signal);
    return this.waitForExit(timeoutMs);
  }

  async waitForExit(timeoutMs = 30_000): Promise<CliResult> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.child.kill('SIGKILL');
        reject(new Error(`CLI did not exit within ${timeoutMs} ms\nstderr:\n${this.stderr}`));
      }, timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

export function startCli(args: readonly string[], env: NodeJS.ProcessEnv): CliProcess {
  return new CliProcess(args, env);
}

/** Runs a TypeScript file of the repository (an example) the way the CLI runs: `node --import tsx <script>`. */
export function startScript(script: string, args: readonly string[], env: NodeJS.ProcessEnv): CliProcess {
  return new CliProcess(args, env, { script });
}

/** Runs a command to its end (bounded) and returns its exit code and output. */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<CliResult> {
  return startCli(args, env).waitForExit(timeoutMs);
}

/**
 * How soon a process must exit once its work is done or it got SIGTERM. On an idle machine the examples and
 * the demo exit in 20-100 ms; the faults this guards against (an uncleared 30 s timer, an open pool or
 * publisher) keep a process alive for 30 s or for ever. 10 s sits far from both, so a loaded CI machine
 * does not turn a pass into a failure.
 */
export const PROMPT_EXIT_MS = 10_000;
