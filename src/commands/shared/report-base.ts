/**
 * The empty StateOperationReport every state operation starts from, and the warnings several
 * operations' reports share.
 */
import { diagnostic, type Diagnostic } from '../../errors/diagnostic';
import { localWorkDiagnostic } from '../../state/local-work';
import { emptyDiagnostics, FORMAT_VERSION, REPORT_API_VERSION, type StateOperationReport } from '../../report/types';
import { keyFileOpenTo } from '../../util/sealed';

export function stateOperationReport(operation: string, environment: string, details: Record<string, unknown> = {}): StateOperationReport {
  return {
    apiVersion: REPORT_API_VERSION,
    formatVersion: FORMAT_VERSION,
    kind: 'StateOperationReport',
    operation,
    environment,
    result: 'unchanged',
    details,
    ...emptyDiagnostics(),
  };
}

/** NYL-STATE-DIVERGED for each of the clone's known branches a sync left as it was. */
export function divergedWarnings(env: string, diverged: string[]): Diagnostic[] {
  return diverged.map((ref) =>
    diagnostic('NYL-STATE-DIVERGED', 'warning', `the clone's ${ref} diverged from the state repository and was left as it is`, { env, ref }),
  );
}

/** NYL-STATE-LOCAL-WORK as a warning (status, plan): online writers refuse until `nyl recover -e ENV --local` imports them. */
export function localWorkWarnings(env: string, coordination: string, refs: Map<string, string>): Diagnostic[] {
  return refs.size === 0 ? [] : [localWorkDiagnostic(env, coordination, refs.keys(), 'warning')];
}

/**
 * NYL-BACKEND-STATE-LOST as a drift observation found it (verify, and status or a run that read
 * it): its fix names the verify and the --reapply, as no run repairs a lost state by itself.
 */
export function stateLostObserved(env: string, unit: string, detail: string | undefined): Diagnostic {
  return diagnostic('NYL-BACKEND-STATE-LOST', 'warning', `${unit}: ${detail ?? 'the state its receipt recorded is gone'}`, {
    env,
    unit,
    units: [unit],
    observed: true,
  });
}

/**
 * NYL-SECRETS-KEY-FILE-OPEN when the key file NYL_SECRETS_KEY_FILE names may be read or written by
 * its group or others (the commands that use the key ring: reconcile, plan, verify, reseal).
 * Nothing is refused: the key works, but whoever can read the file opens every seal it made.
 */
export function keyFileWarnings(env: string, processEnv: NodeJS.ProcessEnv): Diagnostic[] {
  const open = keyFileOpenTo(processEnv);
  if (!open) return [];
  const mode = open.mode.toString(8).padStart(4, '0');
  const message = `the key file ${open.file} has mode ${mode}: its group or others may read or write it, and whoever reads it opens every sealed value the key protects`;
  return [diagnostic('NYL-SECRETS-KEY-FILE-OPEN', 'warning', message, { env, file: open.file })];
}
