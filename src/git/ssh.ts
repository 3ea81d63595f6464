/**
 * One ssh connection per host for a whole command (issue 33). Without it every git call to an ssh
 * remote (each fetch, push, ls-remote) opens a new connection: a TCP handshake, key exchange and
 * authentication, several round trips each. OpenSSH multiplexes sessions over one master
 * connection (`ControlMaster=auto`): the first git call starts it, the next ones reuse it.
 *
 * The control sockets live in a private directory (mode 0700, made by mkdtemp) of this process,
 * named by `%C` (a hash of host, port and user: short, whatever the temp path). `close` asks each
 * master to exit and removes the directory; `ControlPersist` is short, so a master whose command
 * died without closing ends by itself soon after, and the exit handler removes the directory.
 *
 * Git runs ssh through `GIT_SSH_COMMAND` (a shell command): the user's own ssh command, from
 * GIT_SSH_COMMAND or `core.sshCommand`, is kept and the options appended, when it runs `ssh`. A
 * different program (GIT_SSH, a wrapper script) is left alone, and so is NYL_SSH_MULTIPLEX=0.
 * Nothing secret goes on a command line: only options and the directory's path.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { NodeProcessRunner } from '../exec/process';

/** Seconds a master stays after its last session (a command that died without closing it). */
const CONTROL_PERSIST_S = 15;

/** Does this remote (URL or scp-like `host:path`) go through ssh? */
export function isSshRemote(remote: string): boolean {
  if (/^(ssh|git\+ssh|ssh\+git):\/\//i.test(remote)) return true;
  // scp-like syntax: no scheme, a host before the first colon, no slash before it.
  return !/^[a-z][a-z0-9+.-]*:\/\//i.test(remote) && /^[^/:]+:/.test(remote);
}

/**
 * Does a control socket fit under this directory? A Unix socket's path has at most 107 bytes, and
 * ssh binds the master first at the path plus a random suffix of 17 characters: the directory,
 * `/nyl-ssh-XXXXXX`, `/` and `%C` (40 hex digits) must leave room for it. A long TMPDIR falls
 * back to /tmp; where neither fits, nothing is multiplexed (ssh would fail every call).
 */
function socketFits(dir: string): boolean {
  return Buffer.byteLength(dir) + '/nyl-ssh-XXXXXX/'.length + 40 + 17 < 104 && existsSync(dir);
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export class SshMultiplexer {
  private dir: string | undefined;
  private command: string | null | undefined;
  private readonly removeDir = () => this.removeDirectory();

  constructor(
    private readonly runner: NodeProcessRunner,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /**
   * The GIT_SSH_COMMAND that reuses one connection per host, or undefined when multiplexing is
   * off. `configured` is the repository's core.sshCommand (asked once, by the caller).
   */
  sshCommand(configured: () => Promise<string | undefined>): Promise<string | undefined> {
    if (this.command !== undefined) return Promise.resolve(this.command ?? undefined);
    return this.decide(configured);
  }

  private async decide(configured: () => Promise<string | undefined>): Promise<string | undefined> {
    if (this.env.NYL_SSH_MULTIPLEX === '0' || this.env.GIT_SSH) return this.settle(null);
    const base = this.env.GIT_SSH_COMMAND || (await configured()) || 'ssh';
    // Only ssh takes these options; a wrapper of the user's is left as it is.
    if (basename(base.trim().split(/\s+/)[0] ?? '') !== 'ssh') return this.settle(null);
    const parent = [tmpdir(), '/tmp'].find((d) => socketFits(d));
    if (!parent) return this.settle(null);
    this.dir = mkdtempSync(join(parent, 'nyl-ssh-'));
    process.once('exit', this.removeDir);
    const path = shellQuote(join(this.dir, '%C'));
    return this.settle(`${base} -o ControlMaster=auto -o ControlPath=${path} -o ControlPersist=${CONTROL_PERSIST_S}`);
  }

  private settle(command: string | null): string | undefined {
    this.command = command;
    return command ?? undefined;
  }

  /** Asks every master this command started to exit, and removes the control directory. */
  async close(): Promise<void> {
    const dir = this.dir;
    if (!dir) return;
    let sockets: string[] = [];
    try {
      sockets = readdirSync(dir);
    } catch {
      /* already gone */
    }
    await Promise.all(
      sockets.map((name) =>
        this.runner.run(['ssh', '-o', `ControlPath=${join(dir, name)}`, '-O', 'exit', 'nyl-control'], { env: this.env, timeoutMs: 5000, killGraceMs: 1000 }),
      ),
    );
    this.removeDirectory();
    // A later ssh call (none is expected after close) starts over with a new directory.
    this.command = undefined;
  }

  private removeDirectory(): void {
    if (!this.dir) return;
    rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
    process.removeListener('exit', this.removeDir);
  }
}
