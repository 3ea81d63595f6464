/**
 * The text of a command over several environments (MultiEnvironmentReport): each environment's
 * section as its own command would print it, or why it did not run.
 */
import type { MultiEnvironmentReport, RefusalDocument, SingleEnvironmentReport } from '../../report/types';
import { withDiagnostics } from './render';

/**
 * A command over several environments: one section per environment in the order they ran,
 * headed by its name and exit code, then what the single-environment command prints
 * (`renderOne`: its table, run/source/desired/observed lines, diagnostics), or for one not run why
 * (blocked, refused, not started).
 */
export function renderMultiEnvironment(r: MultiEnvironmentReport, renderOne: (doc: SingleEnvironmentReport) => string): string {
  const sections = r.environmentOrder.map((env) => {
    const doc = r.environments[env]!;
    const body = isUnrun(doc) ? renderUnrun(env, doc) : renderOne(doc);
    return `== environment ${env} (exit ${r.exitCodes[env]}) ==\n${body.replace(/\n+$/, '')}\n`;
  });
  return withDiagnostics(sections.join('\n'), [...r.errors, ...r.warnings, ...r.notes]).replace(/\n+$/, '\n');
}

/** A section without a report of its own: blocked, not started, or a refusal's short form (a state operation's refusal is its report). */
function isUnrun(doc: SingleEnvironmentReport | RefusalDocument): doc is RefusalDocument {
  if ('result' in doc && doc.result === 'refused' && ('blockedBy' in doc.details || 'notStarted' in doc.details)) return true;
  return doc.kind !== 'StateOperationReport' && !('unitOrder' in doc);
}

function renderUnrun(env: string, doc: RefusalDocument): string {
  const blockedBy = doc.details.blockedBy as string[] | undefined;
  const what = blockedBy ? `blocked by ${blockedBy.join(', ')}` : doc.details.notStarted ? 'not started (cancelled)' : 'refused';
  return withDiagnostics(`${env}: ${what}`, [...doc.errors, ...doc.warnings, ...doc.notes]);
}
