/**
 * -e / -l / -g of the multi-environment commands (reconcile, plan, status, teardown, verify) ->
 * the one EnvironmentSelector they ask for. Checked before anything is read: exactly one form,
 * and -l pairs that parse. Which environments it selects needs the project (resolveSelection).
 */
import { fail } from '../errors/diagnostic';
import { type EnvironmentSelector, parseLabelSelector, qualifiedUnits } from './shared/environment-selection';
import type { ParsedCommand } from './command';

function strings(value: string | boolean | string[] | undefined): string[] {
  return Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
}

/** True when the command selects environments with -e/-l/-g (repeated -e allowed). */
export function selectsEnvironments(p: ParsedCommand): boolean {
  return p.spec.options.some((o) => o.name === 'group');
}

/** The selection the command line asks for: exactly one of repeated -e, -l pairs and -g. */
export function environmentSelectorOf(p: ParsedCommand): EnvironmentSelector {
  const names = strings(p.values.environment);
  const labels = strings(p.values.labels);
  const group = strings(p.values.group);
  const given = [
    ...(names.length > 0 ? [names.map((n) => `-e ${n}`).join(' ')] : []),
    ...(labels.length > 0 ? [labels.map((l) => `-l ${l}`).join(' ')] : []),
    ...(group.length > 0 ? [`-g ${group[0]}`] : []),
  ];
  const command = `nyl ${p.spec.words.join(' ')}`;
  if (given.length === 0) {
    fail('NYL-USAGE', `${command} needs -e <environment>, -l <key=value> or -g <group>`, {
      fix: 'pass -e <environment> (repeatable), -l <key>=<value> or -g <group>',
    });
  }
  if (given.length > 1) {
    fail('NYL-USAGE', `${command} selects environments in one way only, and was given ${given.join(' and ')}`, {
      fix: `pass only one of: ${given.join(', or ')}`,
    });
  }
  if (names.length > 0) return { names };
  if (labels.length > 0) return { labels: parseLabelSelector(labels) };
  return { group: group[0]! };
}

/**
 * The one environment of a command line that names exactly one (a repeat of the same -e
 * included). Callers ask only after finding that it selects no more (the CLI's dispatch, across.ts).
 */
export function singleEnvironmentOf(p: ParsedCommand): string {
  const selector = environmentSelectorOf(p);
  if ('names' in selector && new Set(selector.names).size === 1) return selector.names[0]!;
  throw new Error(`nyl ${p.spec.words.join(' ')}: asked for the one environment of a selection of several`);
}

/** `--unit` names of a single environment's run: `ENV/UNIT` must name that environment. */
export function unitsOfSingle(environment: string, units: string[]): string[] {
  return units.length === 0 ? [] : qualifiedUnits([environment], units).get(environment)!;
}
