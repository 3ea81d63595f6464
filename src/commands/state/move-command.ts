/**
 * `nyl state move`: move the state to the location the Environment configures now; each option
 * naming the old location defaults to the configured value.
 */
import type { StateOperationReport } from '../../report/types';
import { type Command, reporting } from '../command';
import { AUTHOR, ENV, OUTPUT, REASON, WAIT } from '../options';

export const stateMoveCommand: Command = reporting<StateOperationReport>({
  words: ['state', 'move'],
  summary: "Move an environment's state to the location its Environment configures",
  usage:
    'nyl state move -e <env> [--from <url|repository|local>] [--desired-ref <ref>] [--observed-ref <ref>] [--state-path <path>] [--coordination-refs <prefix>] [options] [PATH]',
  description:
    'Moves the state to the location the Environment configures now; the options name the old location, each defaulting to the configured value. ' +
    'The history of both state refs moves (every old commit stays an ancestor of the new tips; nothing is rewritten or force-pushed), and units keep their uids, receipts and conditions. ' +
    "First the old location records the move (state.yaml: status moved, movedTo, a moved event; one commit per ref, under the old location's lease), so every command pointed there refuses with NYL-STATE-MOVED; " +
    "then the new location continues that history under its own lease, with the old location's unimported run and evidence refs copied beside it. " +
    'An interrupted move completes when run again. The old refs stay for audit; removing them is a manual step. ' +
    'A move refuses while a run or a broken lease holds the old location (NYL-LEASE-HELD, NYL-LEASE-BROKEN), and when the new location holds other state of the environment (NYL-STATE-MOVE-DESTINATION).',
  options: [
    ENV,
    {
      name: 'from',
      type: 'string',
      value: '<url|repository|local>',
      help: "The old repository: a URL, a GitRepository's name, or local (where --local runs commit: a remote's cache repository when it is not origin, else the clone's own branches). Default: the configured repository.",
    },
    { name: 'desired-ref', type: 'string', value: '<ref>', help: 'The old desired ref. Default: the configured one.' },
    { name: 'observed-ref', type: 'string', value: '<ref>', help: 'The old observed ref. Default: the configured one.' },
    { name: 'state-path', type: 'string', value: '<path>', help: "The old state.path (the environment's directory on the refs). Default: the configured one." },
    { name: 'coordination-refs', type: 'string', value: '<prefix>', help: 'The old coordinationRefPrefix, such as refs/nyl/. Default: the configured one.' },
    REASON,
    WAIT,
    AUTHOR,
    OUTPUT,
  ],
  examples: [
    'nyl state move -e dev --from https://git.example.com/old-state.git',
    'nyl state move -e dev --desired-ref nyl/dev/desired --observed-ref nyl/dev/observed',
    'nyl state move -e dev --from local',
    'nyl state move -e dev --coordination-refs refs/nyl/',
  ],
  report: 'StateOperationReport',
  async run(rt, p) {
    const { common, stringOpt, waitOf } = await import('../request');
    const { stateMove } = await import('./state-move');
    const named: Record<string, string | undefined> = {
      from: stringOpt(p, 'from'),
      desiredRef: stringOpt(p, 'desired-ref'),
      observedRef: stringOpt(p, 'observed-ref'),
      statePath: stringOpt(p, 'state-path'),
      coordinationRefs: stringOpt(p, 'coordination-refs'),
    };
    const from = Object.fromEntries(Object.entries(named).filter(([, v]) => v !== undefined));
    return stateMove(rt, { ...common(p), ...from, ...waitOf(p) });
  },
  async renderer() {
    const { renderStateOperation } = await import('../text/render');
    return (report) => renderStateOperation(report);
  },
});
