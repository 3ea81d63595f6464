/**
 * Warnings about source a command's rendering may miss. NYL-SOURCE-UNCOMMITTED (plan, reconcile,
 * status): working files the rendering reads differ from HEAD, the commit it renders, so the
 * command does not see those edits. NYL-SOURCE-UNDECLARED-READ (plan): a Command's action names
 * source paths its execution key does not cover (../../project/undeclared-reads.ts).
 */
import { relative } from 'node:path';
import { type Diagnostic, diagnostic } from '../../errors/diagnostic';
import type { Plan } from '../../plan/actions';
import { ownershipSet } from '../../project/selectors';
import { sourceReads } from '../../project/source-reads';
import { undeclaredReads } from '../../project/undeclared-reads';
import { pathspecsOf, projectReadPatterns, readsPath } from '../../project/working-reads';
import type { OpenedEnvironment } from './context';

/** How many changed paths a message names before it says how many more. */
const MAX_NAMED = 8;

/** What each command does not do with the edits, for the message. */
const IGNORED_BY = { plan: 'this plan does not show them', reconcile: 'this run did not apply them', status: 'this status does not judge them' } as const;

/**
 * NYL-SOURCE-UNCOMMITTED when working files the environment's rendering reads differ from HEAD,
 * the commit it renders: one `git status` limited to those paths. None when the source is another
 * commit, or --worktree made the working files the source (opened.workingChanges is absent then).
 */
export async function uncommittedWarnings(opened: OpenedEnvironment, command: keyof typeof IGNORED_BY): Promise<Diagnostic[]> {
  if (!opened.workingChanges) return [];
  const patterns = projectReadPatterns(opened.project, ownershipSet(opened.project, opened.env), opened.drivers);
  const changes = (await opened.workingChanges(pathspecsOf(patterns))).filter((c) => readsPath(patterns, c.path));
  if (changes.length === 0) return [];
  const env = opened.env.name;
  const named = changes.slice(0, MAX_NAMED).map((c) => `${c.path} ${c.change}`);
  const more = changes.length > MAX_NAMED ? `, and ${changes.length - MAX_NAMED} more` : '';
  const files = changes.length === 1 ? 'a file it reads differs' : `${changes.length} files it reads differ`;
  const message = `${env} renders HEAD (commit ${opened.sourceCommit.slice(0, 12)}), and ${files} in the working tree: ${named.join(', ')}${more}; ${IGNORED_BY[command]}`;
  const projectDir = relative(process.cwd(), opened.project.root).split('\\').join('/');
  return [
    diagnostic('NYL-SOURCE-UNCOMMITTED', 'warning', message, {
      env,
      rerun: command === 'status' ? 'plan' : command,
      paths: changes.map((c) => c.path),
      ...(projectDir ? { projectDir } : {}),
      data: { commit: opened.sourceCommit, changes },
    }),
  ];
}

/** NYL-SOURCE-UNDECLARED-READ for each selected unit whose action names source paths its reads do not cover. */
export function undeclaredReadWarnings(opened: OpenedEnvironment, plan: Plan, only: ReadonlySet<string> | undefined): Diagnostic[] {
  const { project, drivers } = opened;
  const out: Diagnostic[] = [];
  for (const unit of ownershipSet(project, opened.env)) {
    if (only && !only.has(unit.name)) continue;
    const kind = drivers.descriptor(unit.kind);
    const rendering = plan.units.get(unit.name)?.rendering ?? unit.spec;
    const reads = sourceReads(unit, rendering, project.objects, drivers, project.dirCalls);
    const missing = undeclaredReads(kind, rendering, project.objects, reads);
    if (missing.length === 0) continue;
    const field = typeof unit.spec[kind?.actionFields?.shellText ?? ''] === 'string' ? kind!.actionFields!.shellText : kind!.actionFields!.argv;
    const words = missing.map((m) => m.word).join(', ');
    const message = `${unit.kind} ${unit.name}: its ${field} names ${words}, which no inputs glob covers: a change there does not run it again`;
    out.push(
      diagnostic('NYL-SOURCE-UNDECLARED-READ', 'warning', message, {
        env: opened.env.name,
        unit: unit.name,
        units: [unit.name],
        inputs: missing.map((m) => m.input),
        hasInputs: Array.isArray(unit.spec.inputs),
        location: { file: unit.origin.file, ...(unit.locations?.[`/${field}`] ?? { line: unit.origin.line }), pointer: `/spec/${field}` },
        data: { words: missing.map((m) => m.word), inputs: missing.map((m) => m.input) },
      }),
    );
  }
  return out;
}
