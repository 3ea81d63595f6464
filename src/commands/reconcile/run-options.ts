/**
 * What the two runs, `nyl reconcile` and `nyl teardown`, share in their requests: output
 * controls, concurrency, --source, --wait-lease, --allow-dependents and --allow-incomplete.
 */
import { resolve as resolvePath } from 'node:path';
import type { ParsedCommand } from '../command';
import { common, positiveInt, stringOpt, waitOf } from '../request';

export function runOptions(p: ParsedCommand, environment?: string) {
  const source = stringOpt(p, 'source');
  const logDir = stringOpt(p, 'unit-log-dir');
  return {
    ...common(p, environment),
    failFast: p.values['fail-fast'] === true,
    quietUnitOutput: p.values['quiet-unit-output'] === true,
    ...(logDir !== undefined ? { unitLogDir: resolvePath(logDir) } : {}),
    concurrency: positiveInt(p, 'concurrency', 4),
    allowDependents: p.values['allow-dependents'] === true,
    allowIncomplete: p.values['allow-incomplete'] === true,
    ...(source !== undefined ? { source } : {}),
    ...waitOf(p),
  };
}
