/**
 * Warnings about source a command's rendering may miss. NYL-SOURCE-UNDECLARED-READ (plan): a
 * Command's action names source paths its execution key does not cover
 * (../../project/undeclared-reads.ts).
 */
import { type Diagnostic, diagnostic } from '../../errors/diagnostic';
import type { Plan } from '../../plan/actions';
import { ownershipSet } from '../../project/selectors';
import { sourceReads } from '../../project/source-reads';
import { undeclaredReads } from '../../project/undeclared-reads';
import type { OpenedEnvironment } from './context';

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
