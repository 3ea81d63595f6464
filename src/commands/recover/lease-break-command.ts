/**
 * `nyl lease break`: declare the holder of the lease gone, so that an importer takes it over.
 */
import type { StateOperationReport } from '../../report/types';
import { type Command, reporting } from '../command';
import { AUTHOR, ENV, LOCAL, OUTPUT, REASON, WAIT } from '../options';

export const leaseBreakCommand: Command = reporting<StateOperationReport>({
  words: ['lease', 'break'],
  summary: 'Declare the holder of the lease gone',
  usage: 'nyl lease break -e <env> --reason <text> [options] [PATH]',
  description:
    'Marks the lease broken, for example after a runner was killed. Only an importer (nyl reconcile, nyl recover -e <env>) takes a broken lease over, ' +
    'and records the break in its transition commit; until then every other state writer refuses with NYL-LEASE-BROKEN. A lease already broken is reported as such. ' +
    'With --wait-lease, a holder that releases the lease in time is not broken.',
  options: [
    ENV,
    REASON,
    { ...WAIT, help: 'Give the holder up to this long (such as 10m; 0s to 24h) to release the lease by itself; break it only if it still holds it then.' },
    LOCAL,
    AUTHOR,
    OUTPUT,
  ],
  examples: [
    'nyl lease break -e dev --reason "runner was killed"',
    'nyl lease break -e dev --wait-lease 10m --reason "runner stopped reporting"',
    'nyl lease break -e dev --local --reason "local run was killed"',
  ],
  report: 'StateOperationReport',
  async run(rt, p) {
    const { common, waitOf } = await import('../request');
    const { leaseBreak } = await import('./lease-break');
    return leaseBreak(rt, { ...common(p), ...waitOf(p) });
  },
  async renderer() {
    const { renderStateOperation } = await import('../text/render');
    return (report) => renderStateOperation(report);
  },
});
