/**
 * The only builder of git argv. Every git invocation of Nyl goes through Git.run, which fixes the
 * environment (no prompts, C locale for parsing) and counts processes and pushes for benchmarks
 * (NYL_GIT_STATS=<file> appends one JSON line per command at exit).
 *
 * A command that talks to another repository (fetch, push, ls-remote) is ended when it has not
 * finished within the network timeout (60 s unless NYL_GIT_TIMEOUT says otherwise): a remote that
 * accepts connections and never answers must not hang a run. State moves kilobytes to a few
 * megabytes, so a minute without an end is a hang, not a slow link.
 */
import { appendFileSync } from 'node:fs';
import type { NodeProcessRunner, ProcessResult, RunOptions } from '../exec/process';
import { isSshRemote, SshMultiplexer } from './ssh';

interface GitStats {
  processes: number;
  pushes: number;
  fetches: number;
  /** Fetches, pushes and ls-remotes whose repository is not on this machine: the round trips a network remote costs. */
  remote: number;
  byCommand: Record<string, number>;
}

interface GitRunOptions {
  input?: string | Buffer;
  env?: NodeJS.ProcessEnv;
}

export class GitError extends Error {
  constructor(
    readonly result: ProcessResult,
    readonly dir: string,
  ) {
    super(`git ${result.argv.slice(1).join(' ')} failed in ${dir} (exit ${String(result.code)}): ${result.stderr.toString().trim()}`);
    this.name = 'GitError';
  }
}

/** How long a fetch, push or ls-remote may take before it is ended, unless NYL_GIT_TIMEOUT says otherwise. */
export const DEFAULT_NETWORK_TIMEOUT_MS = 60_000;

const NETWORK_VERBS = new Set(['fetch', 'push', 'ls-remote']);

/** The git command of an argv (after git itself): its first word that is not an option. */
function verbOf(args: readonly string[]): string {
  return args.find((a) => !a.startsWith('-')) ?? '?';
}

/**
 * Does this network command talk to another machine? Its repository is the first word after the
 * verb that is not an option (every argv of src/git puts it there); a path or a file:// URL is on
 * this machine.
 */
function reachesNetwork(args: readonly string[], verb: string): boolean {
  const repository = repositoryOf(args, verb);
  return repository !== undefined && !/^(\/|\.|file:)/.test(repository);
}

/** The repository a network command talks to: the first word after the verb that is not an option. */
function repositoryOf(args: readonly string[], verb: string): string | undefined {
  return args.slice(args.indexOf(verb) + 1).find((a) => !a.startsWith('-'));
}

export class Git {
  readonly stats: GitStats = { processes: 0, pushes: 0, fetches: 0, remote: 0, byCommand: {} };
  private readonly baseEnv: NodeJS.ProcessEnv;
  /** One ssh connection per host for the whole command (./ssh.ts). */
  private readonly ssh: SshMultiplexer;

  constructor(
    readonly runner: NodeProcessRunner,
    env: NodeJS.ProcessEnv,
    readonly networkTimeoutMs: number = DEFAULT_NETWORK_TIMEOUT_MS,
  ) {
    this.baseEnv = {
      ...env,
      GIT_TERMINAL_PROMPT: '0',
      GIT_OPTIONAL_LOCKS: '0',
      LC_ALL: 'C',
      LANG: 'C',
      // Nyl writes commits with explicit identities and dates; never let a user's
      // GIT_AUTHOR_* leak into state commits.
      GIT_AUTHOR_NAME: undefined,
      GIT_AUTHOR_EMAIL: undefined,
      GIT_AUTHOR_DATE: undefined,
      GIT_COMMITTER_NAME: undefined,
      GIT_COMMITTER_EMAIL: undefined,
      GIT_COMMITTER_DATE: undefined,
      GIT_DIR: undefined,
      GIT_WORK_TREE: undefined,
      GIT_INDEX_FILE: undefined,
    };
    this.ssh = new SshMultiplexer(runner, this.baseEnv);
    const statsFile = env.NYL_GIT_STATS;
    if (statsFile) {
      process.once('exit', () => {
        try {
          appendFileSync(statsFile, `${JSON.stringify({ argv: process.argv.slice(2), ...this.stats })}\n`);
        } catch {
          /* benchmarks only */
        }
      });
    }
  }

  env(extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    return extra ? { ...this.baseEnv, ...extra } : this.baseEnv;
  }

  private count(args: string[]): string {
    this.stats.processes++;
    const verb = verbOf(args);
    this.stats.byCommand[verb] = (this.stats.byCommand[verb] ?? 0) + 1;
    if (verb === 'push') this.stats.pushes++;
    if (verb === 'fetch') this.stats.fetches++;
    if (NETWORK_VERBS.has(verb) && reachesNetwork(args, verb)) this.stats.remote++;
    return verb;
  }

  /** Runs git in dir; never throws for a non-zero exit. */
  async run(dir: string, args: string[], options: GitRunOptions = {}): Promise<ProcessResult> {
    const verb = this.count(args);
    // A caller's own ssh command (in options.env) is kept as it is: it is not multiplexed.
    const callerSsh = options.env?.GIT_SSH_COMMAND !== undefined || options.env?.GIT_SSH !== undefined;
    const ssh = !callerSsh && NETWORK_VERBS.has(verb) && isSshRemote(repositoryOf(args, verb) ?? '') ? await this.sshCommand(dir) : undefined;
    const runOptions: RunOptions = { cwd: dir, env: this.env(ssh ? { ...options.env, GIT_SSH_COMMAND: ssh } : options.env) };
    if (options.input !== undefined) runOptions.input = options.input;
    // In a process group of its own: the timeout must end git's remote helper (git-remote-http) too.
    if (NETWORK_VERBS.has(verb)) Object.assign(runOptions, { timeoutMs: this.networkTimeoutMs, killGraceMs: 1000, group: true });
    return this.runner.run(['git', ...args], runOptions);
  }

  /** The GIT_SSH_COMMAND that shares one connection per host; the repository's core.sshCommand is kept. */
  private sshCommand(dir: string): Promise<string | undefined> {
    return this.ssh.sshCommand(async () => {
      const result = await this.run(dir, ['config', '--get', 'core.sshCommand']);
      return result.code === 0 ? result.stdout.toString().trim() || undefined : undefined;
    });
  }

  /** Ends what the command kept open for its git calls: the ssh master connections. */
  close(): Promise<void> {
    return this.ssh.close();
  }

  /** What went wrong with a git command, in one line: its last error line, or that it timed out. */
  failureOf(result: ProcessResult): string {
    const verb = verbOf(result.argv.slice(1));
    if (result.timedOut) return `git ${verb} did not finish within ${this.networkTimeoutMs / 1000} s (NYL_GIT_TIMEOUT)`;
    const lines = result.stderr.toString().trim().split('\n').filter(Boolean);
    return lines[lines.length - 1] ?? `git ${verb} failed`;
  }

  /** Runs git and throws GitError unless it exits 0; returns stdout as text. */
  async text(dir: string, args: string[], options: GitRunOptions = {}): Promise<string> {
    const result = await this.run(dir, args, options);
    if (result.code !== 0) throw new GitError(result, dir);
    return result.stdout.toString();
  }

  /** Starts a long-lived git process (cat-file --batch). */
  start(dir: string, args: string[]) {
    this.count(args);
    return this.runner.start(['git', ...args], { cwd: dir, env: this.baseEnv });
  }
}
