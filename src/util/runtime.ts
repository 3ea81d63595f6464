/**
 * The ports every operation receives: process runner (and Git, which runs through it), clock,
 * environment, cancellation, fault points and the stderr sink. Tests build their own Runtime to
 * pin time, crash at a named point, or race two runs deterministically, in one process or many.
 */
import { existsSync, writeFileSync } from 'node:fs';
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
  faults: Faults;
  /** Progress lines for humans (stderr); reports go elsewhere. */
  log: (line: string) => void;
  /** Only when stderr is a terminal: a status line kept below the log lines (see LiveStatus). */
  liveStatus?: LiveStatus;
}

/**
 * A status line on a terminal, rewritten in place (`running: migrate 1m02s`): each key (an
 * environment's run) sets its part, undefined takes it away. Whoever owns the terminal clears
 * the line before every log line and draws it again after, so the two never mix.
 */
export interface LiveStatus {
  set(key: string, text: string | undefined): void;
}

/**
 * Named points of the protocol where a test may crash or pause the process (a port: the CLI reads
 * them from the environment, in-process tests script them). `units` names the units a point
 * concerns, such as the checkpoints a push carries, so that a test can address "the checkpoint
 * push that carries db". Reaching a point never changes what the protocol does.
 */
interface Faults {
  reach(point: string, units?: readonly string[]): Promise<void>;
}

/**
 * Fault points from the environment: NYL_FAULT_AT=<point>[@<unit>][#<n>][,...] (`#n`: only the
 * n-th time the point is reached, such as the second lease a state move takes) with
 * NYL_FAULT_ACTION=kill|exit|pause|mark. `pause` writes NYL_FAULT_MARKER (a file path) and waits
 * until that file is removed; `mark` only writes it, so that a test knows the point was reached
 * (a waiter that is really waiting, with its signal handlers in place).
 */
export class FaultPoints implements Faults {
  private readonly points: { point: string; unit?: string; nth?: number }[];
  private readonly action: string;
  private readonly marker: string | undefined;
  /** How often each entry's point was reached so far, for `point#N`. */
  private readonly reached = new Map<number, number>();

  constructor(
    env: NodeJS.ProcessEnv,
    private readonly clock: Clock,
  ) {
    this.points = (env.NYL_FAULT_AT ?? '')
      .split(',')
      .filter(Boolean)
      .map((p) => {
        const [spec, nth] = p.split('#');
        const [point, unit] = spec!.split('@');
        return { point: point!, ...(unit ? { unit } : {}), ...(nth ? { nth: Number(nth) } : {}) };
      });
    this.action = env.NYL_FAULT_ACTION ?? 'kill';
    this.marker = env.NYL_FAULT_MARKER;
  }

  /** Does an entry take effect here? `point#N` only the Nth time its point (and unit) is reached. */
  private matches(point: string, units: readonly string[] | undefined): boolean {
    let hit = false;
    this.points.forEach((p, i) => {
      if (p.point !== point || (p.unit && !(units ?? []).includes(p.unit))) return;
      const count = (this.reached.get(i) ?? 0) + 1;
      this.reached.set(i, count);
      if (p.nth === undefined || p.nth === count) hit = true;
    });
    return hit;
  }

  async reach(point: string, units?: readonly string[]): Promise<void> {
    if (this.points.length === 0 || !this.matches(point, units)) return;
    if (this.action === 'pause') {
      if (this.marker) writeFileSync(this.marker, `${point}\n`);
      while (this.marker && existsSync(this.marker)) await this.clock.sleep(20);
      return;
    }
    if (this.action === 'mark') {
      if (this.marker) writeFileSync(this.marker, `${point}\n`);
      return;
    }
    if (this.action === 'exit') process.exit(99);
    process.kill(process.pid, 'SIGKILL');
    await new Promise(() => {});
  }
}
