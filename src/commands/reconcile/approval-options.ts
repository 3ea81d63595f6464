/**
 * `nyl reconcile`'s approval flags: --approve and its companions, declared and read here, as
 * given (the run checks them against the environment).
 */
import type { OptionSpec, ParsedCommand } from '../command';

/** --approve and its companions: reconcile's (and later teardown's) approval flags. */
export const APPROVAL_OPTIONS: OptionSpec[] = [
  {
    name: 'approve',
    type: 'string',
    multiple: true,
    list: true,
    value: '<unit>[=<digest>]',
    help: 'Approve a unit that waits for an approval (approval.required, a drift repair or --reapply of a unit not safe to re-run, a manual unit in a --local run). <unit> covers the execution key it resolves to in this run; <unit>=<digest> only the reviewed plan `nyl plan` printed. Repeatable or comma-separated.',
  },
  { name: 'approve-all', type: 'boolean', help: 'Approve every unit that waits for an approval, except those whose policy requires a reviewed digest (requireDigest).' },
  { name: 'approved-by', type: 'string', multiple: true, list: true, value: '<name>', help: 'Who approves (repeatable or comma-separated); recorded as asserted. Default: the CI user (GITHUB_ACTOR, GITLAB_USER_LOGIN, BUILD_REQUESTEDFOR), else the Git user.' },
  { name: 'approval-source', type: 'string', value: '<source>', help: 'Where the --approved-by names come from (such as a change ticket system); recorded with them. Default: asserted.' },
];

/** --approve, --approve-all, --approved-by, --approval-source, as given (checked against the environment later). */
export async function approvalOptions(p: ParsedCommand) {
  const { listOpt, stringOpt } = await import('../request');
  const source = stringOpt(p, 'approval-source');
  return { approve: listOpt(p, 'approve'), approveAll: p.values['approve-all'] === true, approvedBy: listOpt(p, 'approved-by'), ...(source !== undefined ? { approvalSource: source } : {}) };
}
