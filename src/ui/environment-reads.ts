/**
 * Every read of one environment's state that `nyl ui` makes goes through here, so that an
 * environment whose state repository cannot be reached costs one slow read per interval, not one
 * per page: a page of environments with one unreachable host among ten would otherwise wait for
 * it on every request (and twice: once for the version, once for the page).
 *
 * - A read that fails because the state repository cannot be read (NYL-STATE-UNAVAILABLE) is
 *   remembered for FAILURE_MEMORY_MS: until then the environment's reads fail at once with the
 *   same diagnostics, and the pages say when it was tried and when it will be tried again. Other
 *   failures (an unknown environment, a source ref that does not resolve) are cheap and local,
 *   and are not remembered: nothing a request names is kept unless reading it cost a wait.
 * - A read that has not ended within READ_TIME_BOX_MS is cut: the page gets NYL-STATE-UNAVAILABLE
 *   at once, and that failure is remembered like any other. The read itself goes on in the
 *   background (git's own network timeout ends it at the latest), so that a slow first fetch of a
 *   big state repository still completes; when it does, the failure is forgotten and the next page
 *   reads again.
 */
import { diagnostic, NylError } from '../errors/diagnostic';

/** How long a failed read of an environment is remembered before the next request tries again. */
const FAILURE_MEMORY_MS = 30_000;
/** How long one read of an environment may take before the page is answered without it. */
const READ_TIME_BOX_MS = 5_000;
/** At most this many failures are remembered (made-up names cannot grow the table beyond it). */
const MAX_REMEMBERED = 256;

/** A remembered failure: what it was, when it happened and when the environment is read again. */
export interface ReadFailure {
  error: NylError;
  at: number;
  retryAt: number;
  timedOut: boolean;
}

/** A remembered failure as the pages show it: also how long until the environment is read again. */
interface RememberedFailure extends ReadFailure {
  retryInMs: number;
}

/** What the view remembers about environments that could not be read, as the pages ask for it. */
export type FailureOf = (environment: string) => RememberedFailure | undefined;

interface Timing {
  timeBoxMs: number;
  memoryMs: number;
  now: () => number;
}

const remembered = (error: unknown): error is NylError => error instanceof NylError && error.diagnostics.some((d) => d.code === 'NYL-STATE-UNAVAILABLE');

export class EnvironmentReads {
  private readonly failures = new Map<string, ReadFailure>();
  readonly timing: Timing;

  constructor(timing: Partial<Timing> = {}) {
    this.timing = { timeBoxMs: READ_TIME_BOX_MS, memoryMs: FAILURE_MEMORY_MS, now: Date.now, ...timing };
  }

  /** The failure remembered for the environment, while it is remembered. */
  failure(environment: string): RememberedFailure | undefined {
    const failure = this.failures.get(environment);
    if (!failure) return undefined;
    const retryInMs = failure.retryAt - this.timing.now();
    if (retryInMs > 0) return { ...failure, retryInMs };
    this.failures.delete(environment);
    return undefined;
  }

  /** Reads the environment: at once the remembered failure, else `read` cut at the time box. */
  async read<T>(environment: string, read: () => Promise<T>): Promise<T> {
    const known = this.failure(environment);
    if (known) throw known.error;
    const work = read();
    let timer: NodeJS.Timeout | undefined;
    let cut = false;
    const box = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        cut = true;
        reject(this.timedOut(environment));
      }, this.timing.timeBoxMs);
    });
    try {
      return await Promise.race([work, box]);
    } catch (error) {
      if (remembered(error)) this.remember(environment, error, cut);
      throw error;
    } finally {
      clearTimeout(timer);
      // A read cut by the time box that ends well later: the environment is readable after all.
      work.then(
        () => {
          if (this.failures.get(environment)?.timedOut) this.failures.delete(environment);
        },
        () => undefined,
      );
    }
  }

  private timedOut(environment: string): NylError {
    const seconds = this.timing.timeBoxMs / 1000;
    return new NylError(
      diagnostic('NYL-STATE-UNAVAILABLE', 'error', `the state of ${environment} was not read within ${seconds} s (nyl ui's time box for one read)`, {
        env: environment,
        fix: `check that the state repository can be reached (\`nyl status -e ${environment}\` shows how long a read takes), then reload the page`,
      }),
    );
  }

  private remember(environment: string, error: NylError, timedOut: boolean): void {
    const at = this.timing.now();
    this.failures.delete(environment);
    this.failures.set(environment, { error, at, retryAt: at + this.timing.memoryMs, timedOut });
    for (const key of this.failures.keys()) {
      if (this.failures.size <= MAX_REMEMBERED) break;
      this.failures.delete(key);
    }
  }
}
