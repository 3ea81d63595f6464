/**
 * The commands that make sense across environments (reconcile, teardown, plan, status, verify):
 * their options checked once, then the one environment named, or each selected one as its own
 * command (commands/shared/multi-environment.ts, with the traits its registry entry gives: the order
 * and gate, and which --unit names it accepts). A command of this kind declares only how it runs
 * for one environment and how that report reads. Light, as every entry: what it uses is loaded
 * when the command runs.
 */
import type { CommandTraits as EnvironmentTraits } from './shared/multi-environment';
import type { EnvironmentListReport, MultiEnvironmentReport, Report, SingleEnvironmentReport } from '../report/types';
import type { Runtime } from '../util/runtime';
import { type Command, type CommandSpec, type CommandTraits, type ParsedCommand, refusalOperationOf, reporting } from './command';

/**
 * The environment a command about one environment runs for, and its `--unit` names there: the
 * environment of a single-environment command line, or each of a selection in turn.
 */
interface Target {
  environment: string;
  units: string[];
}

interface AcrossCommand<R extends SingleEnvironmentReport> extends CommandSpec, CommandTraits {
  report: R['kind'];
  /** How it runs over several environments: the operation its report names, its gate and --unit rule. */
  across: { operation: MultiEnvironmentReport['operation'] } & Pick<EnvironmentTraits, 'gate' | 'unitsFrom'>;
  /** Its options that are wrong whatever the environment: checked once, before the first one runs. */
  check?(p: ParsedCommand, units: string[]): Promise<void>;
  /** Its run for one environment. */
  runOne(rt: Runtime, p: ParsedCommand, target: Target): Promise<R>;
  /** The text of its report, alone or as one environment's section. */
  renderer(): Promise<(report: R) => string>;
  /**
   * What it does when the command line selects no environment (status: lists them, as
   * `kubectl get namespaces` would); without it, that is NYL-USAGE.
   */
  unselected?: {
    run(rt: Runtime, p: ParsedCommand): Promise<EnvironmentListReport>;
    renderer(): Promise<(report: EnvironmentListReport) => string>;
  };
}

/** The registry entry of a command across environments. */
export function acrossCommand<R extends SingleEnvironmentReport>(def: AcrossCommand<R>): Command {
  const { check: _check, runOne: _runOne, renderer, across: _across, unselected, ...rest } = def;
  return reporting<MultiEnvironmentReport | EnvironmentListReport | R>({
    ...rest,
    run: (rt, p) => (unselected && !selectsAny(p) ? unselected.run(rt, p) : selectingCommandOf(rt, p, def)),
    async renderer() {
      const render = await renderer();
      const { renderMultiEnvironment } = await import('./text/multi-environment');
      const section = sectionRenderer(def.report, render);
      const list = unselected ? await unselected.renderer() : undefined;
      return (report) => {
        if (isMulti(report)) return renderMultiEnvironment(report, section);
        if (report.kind === 'EnvironmentListReport') return list!(report);
        return render(report);
      };
    },
  });
}

/** Whether the command line names any environment: -e, -l or -g. */
function selectsAny(p: ParsedCommand): boolean {
  return ['environment', 'labels', 'group'].some((name) => p.values[name] !== undefined);
}

function isMulti(report: Report): report is MultiEnvironmentReport {
  return report.kind === 'MultiEnvironmentReport';
}

/** An environment's section: the command's own report (a refusal of another shape never gets here). */
function sectionRenderer<R extends SingleEnvironmentReport>(kind: R['kind'], render: (report: R) => string): (doc: SingleEnvironmentReport) => string {
  const isOwn = (doc: SingleEnvironmentReport): doc is R => doc.kind === kind;
  return (doc) => {
    if (isOwn(doc)) return render(doc);
    throw new Error(`a ${doc.kind} section in a report of ${kind}s`);
  };
}

/** Over the one environment named, or over each selected one as its own command. */
async function selectingCommandOf<R extends SingleEnvironmentReport>(
  rt: Runtime,
  p: ParsedCommand,
  def: AcrossCommand<R>,
): Promise<R | MultiEnvironmentReport> {
  const { listOpt, requireEnvironment } = await import('./request');
  const { environmentSelectorOf, unitsOfSingle } = await import('./selection');
  // The `--unit`/`--units` names as given (`UNIT` or `ENV/UNIT`).
  const units = listOpt(p, 'unit', 'units');
  await def.check?.(p, units);
  // More than one environment, or any by -l or -g.
  const selector = environmentSelectorOf(p);
  if (!('names' in selector) || new Set(selector.names).size > 1) return severalOf(rt, p, def, units);
  const environment = requireEnvironment(p);
  return def.runOne(rt, p, { environment, units: unitsOfSingle(environment, units) });
}

/** Over several environments: each its own command, in the order and under the gate of its command. */
async function severalOf<R extends SingleEnvironmentReport>(
  rt: Runtime,
  p: ParsedCommand,
  def: AcrossCommand<R>,
  units: string[],
): Promise<MultiEnvironmentReport> {
  const { runEnvironments } = await import('./shared/multi-environment');
  const { positiveInt, stringOpt, worktreeOf } = await import('./request');
  const { environmentSelectorOf } = await import('./selection');
  await worktreeOf(p);
  const source = stringOpt(p, 'source');
  const request = {
    path: p.path,
    selector: environmentSelectorOf(p),
    environmentConcurrency: positiveInt(p, 'environment-concurrency', 1),
    ...(units.length > 0 ? { units } : {}),
    ...(source !== undefined ? { source } : {}),
    ...(p.values.local === true ? { local: true } : {}),
  };
  const traits: EnvironmentTraits = { kind: def.report, refusalOperation: refusalOperationOf(def), gate: def.across.gate, unitsFrom: def.across.unitsFrom };
  return runEnvironments(rt, def.across.operation, traits, request, (environment, named) => def.runOne(rt, p, { environment, units: named ?? [] }));
}
