/**
 * The ports every operation receives: process runner (through Git), clock, environment,
 * cancellation, fault points and the stderr sink. Tests build their own Runtime to pin time,
 * crash at a named point, or race two runs deterministically.
 */
import { writeFileSync, existsSync } from 'node:fs';
import type { ProcessRunner } from '../exec/process';
import type { Git } from '../git/git';
import type { Clock } from './clock';

export interface Runtime {
  git: Git;
  runner: ProcessRunner;
  clock: Clock;
  env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT/SIGTERM. */
  cancel: AbortSignal;
  faults: FaultPoints;
  /** Progress lines for humans (stderr); reports go elsewhere. */
  log: (line: string) => void;
}

/**
 * Named points of the protocol where tests may crash or pause the process:
 * NYL_FAULT_AT=<point>[,<point>...] with NYL_FAULT_ACTION=kill|exit|pause.
 * `pause` writes NYL_FAULT_MARKER (a file path) and waits until that file is removed.
 */
export class FaultPoints {
  private readonly points: Set<string>;
  private readonly action: string;
  private readonly marker: string | undefined;

  constructor(
    env: NodeJS.ProcessEnv,
    private readonly clock: Clock,
  ) {
    this.points = new Set((env.NYL_FAULT_AT ?? '').split(',').filter(Boolean));
    this.action = env.NYL_FAULT_ACTION ?? 'kill';
    this.marker = env.NYL_FAULT_MARKER;
  }

  async reach(point: string): Promise<void> {
    if (!this.points.has(point)) return;
    if (this.action === 'pause') {
      if (this.marker) writeFileSync(this.marker, `${point}\n`);
      while (this.marker && existsSync(this.marker)) await this.clock.sleep(20);
      return;
    }
    if (this.action === 'exit') process.exit(99);
    process.kill(process.pid, 'SIGKILL');
    await new Promise(() => {});
  }
}
