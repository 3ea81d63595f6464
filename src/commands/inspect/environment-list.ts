/**
 * `nyl status` without -e, -l or -g: instead of a usage error, the environments there are to
 * name, with the command line that shows one. Declared Environments come from the project at
 * HEAD; the instances of EnvironmentTemplates from the refs their state locations hold (the web
 * view's discovery: one read per template, none without templates), so a closed preview whose
 * state was deleted stays listed until its refs are removed, as telling it apart would read each
 * instance's state. A template whose state cannot be read is a warning, not a refusal.
 */
import { resolveEnvironment } from '../../project/instances';
import { type EnvironmentListReport, emptyDiagnostics, FORMAT_VERSION, REPORT_API_VERSION } from '../../report/types';
import type { Runtime } from '../../util/runtime';
import { readDeclarations } from '../shared/context';
import { renderTable, withDiagnostics } from '../text/render';
import { discoverInstances } from './instance-discovery';

export async function listEnvironments(rt: Runtime, path: string, local = false): Promise<EnvironmentListReport> {
  const project = await readDeclarations(rt, path);
  const declared = [...project.environments.values()]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((env) => ({ name: env.name, labels: env.labels, dependsOn: env.spec.dependsOn }));
  const discovered = await discoverInstances(rt, path, project, local);
  const instances = discovered.names.map((name) => {
    const template = resolveEnvironment(project, name)?.instance?.template;
    return { name, ...(template !== undefined ? { template } : {}), labels: {}, dependsOn: [] };
  });
  const report: EnvironmentListReport = {
    apiVersion: REPORT_API_VERSION,
    formatVersion: FORMAT_VERSION,
    kind: 'EnvironmentListReport',
    environments: [...declared, ...instances],
    ...emptyDiagnostics(),
  };
  report.warnings.push(...discovered.errors.map((d) => ({ ...d, severity: 'warning' as const })));
  return report;
}

/** The environments as a table, then the command line that shows one. */
export function renderEnvironmentList(report: EnvironmentListReport): string {
  const rows = report.environments.map((e) => [
    e.name,
    e.template !== undefined ? `instance of ${e.template}` : 'declared',
    Object.entries(e.labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(','),
    e.dependsOn.join(', '),
  ]);
  const table = rows.length > 0 ? renderTable(['ENVIRONMENT', 'FROM', 'LABELS', 'DEPENDS ON'], rows) : 'The project declares no environment.';
  const hint =
    rows.length > 0
      ? '\n\nnyl status shows one environment: nyl status -e <environment> (or several: -e repeated, -l <key>=<value>, -g <group>).'
      : '\n\nDeclare an Environment in nyl.yaml, then run nyl state init -e <environment>.';
  return withDiagnostics(`${table}${hint}`, report.warnings);
}
