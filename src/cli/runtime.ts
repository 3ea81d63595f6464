/**
 * The real Runtime of a command: processes, Git (NYL_GIT_TIMEOUT), the clock (NYL_TEST_NOW),
 * fault points and stderr. Its own module so that `nyl __complete environments`, run on each TAB
 * press, builds one without loading the command dispatcher.
 */
import { withoutKeyVariables } from '../util/sealed';
import { NodeProcessRunner } from '../exec/process';
import { fail } from '../errors/diagnostic';
import { DEFAULT_NETWORK_TIMEOUT_MS, Git } from '../git/git';
import { OffsetClock, SystemClock, type Clock } from '../util/clock';
import { parseDuration } from '../util/duration';
import { FaultPoints, type Runtime } from '../util/runtime';
import { stderrPorts } from './terminal';

function clockFrom(env: NodeJS.ProcessEnv): Clock {
  // NYL_TEST_NOW pins the start instant (ISO or epoch ms) for tests; time still advances.
  const pinned = env.NYL_TEST_NOW;
  if (pinned) {
    const ms = /^\d+$/.test(pinned) ? Number(pinned) : Date.parse(pinned);
    if (!Number.isNaN(ms)) return new OffsetClock(ms);
  }
  return new SystemClock();
}

/** NYL_GIT_TIMEOUT: how long a fetch, push or ls-remote may take (a duration, at most a day). */
function networkTimeoutFrom(env: NodeJS.ProcessEnv): number {
  const text = env.NYL_GIT_TIMEOUT;
  if (text === undefined || text === '') return DEFAULT_NETWORK_TIMEOUT_MS;
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0 || ms > 86_400_000) {
    fail('NYL-USAGE', `NYL_GIT_TIMEOUT=${JSON.stringify(text)} is not a duration between 1ms and 1d`, {
      fix: 'set NYL_GIT_TIMEOUT to a duration such as 30s or 2m, or unset it for the default of 60s',
    });
  }
  return ms;
}

/** The Runtime of a command: env is the process environment it reads, cancel what stops its work (dispatch ties it to signals). */
export function createRuntime(env: NodeJS.ProcessEnv, cancel: AbortSignal): Runtime {
  const runner = new NodeProcessRunner();
  const clock = clockFrom(env);
  return {
    // Git's hooks, helpers and credential programs get no key (src/util/sealed.ts).
    git: new Git(runner, withoutKeyVariables(env), networkTimeoutFrom(env)),
    runner,
    clock,
    env,
    cancel,
    faults: new FaultPoints(env, clock),
    ...stderrPorts(process.stderr, env),
  };
}
