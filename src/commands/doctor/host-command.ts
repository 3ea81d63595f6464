/**
 * `nyl doctor host URL [--prefix P]`: whether a Git host can hold orchestration state. The URL
 * is required; a prefix is a ref namespace ending in '/'.
 */
import type { DoctorHostReport } from '../../report/types';
import { type Command, reporting } from '../command';
import { OUTPUT } from '../options';

export const doctorHostCommand: Command = reporting<DoctorHostReport>({
  words: ['doctor', 'host'],
  summary: 'Check whether a Git host can hold orchestration state',
  usage: 'nyl doctor host <url> [--prefix <refs/.../>] [-o text|json]',
  description:
    'Runs the five pushes of the host check against a scratch namespace of the repository at <url> (refs/heads/nyl-doctor/ and <prefix>nyl-doctor/): create a state branch and a lease ref in one atomic push, ' +
    'a stale lease must reject the whole push, matching leases move both, the lease ref is listed by pattern, both are deleted together. ' +
    'It checks the default coordination prefix refs/nyl/ and the branch prefix refs/heads/nyl-run/, or only --prefix, and deletes everything it created, and what an earlier run killed midway left. ' +
    'Use a scratch repository. Exit 0 when a prefix works (a warning names state.coordinationRefPrefix when only the branch prefix does), 1 when none does (NYL-HOST-INCOMPATIBLE, naming atomic pushes when the host lacks them).',
  options: [{ name: 'prefix', type: 'string', value: '<refs/.../>', help: 'Check only this coordination prefix (a ref namespace ending in /).' }, OUTPUT],
  examples: [
    'nyl doctor host https://git.example.com/platform/scratch.git',
    'nyl doctor host ssh://git@git.example.com/platform/scratch.git --prefix refs/heads/nyl-run/ -o json',
  ],
  report: 'DoctorHostReport',
  async run(rt, p) {
    const { fail } = await import('../../errors/diagnostic');
    const { stringOpt } = await import('../request');
    if (!p.pathGiven)
      fail('NYL-USAGE', 'nyl doctor host needs the URL of a repository on the host', {
        fix: 'pass a URL such as https://git.example.com/team/scratch.git: nyl doctor host <url>',
      });
    const prefix = stringOpt(p, 'prefix');
    if (prefix !== undefined && !/^refs\/(?:[A-Za-z0-9._-]+\/)+$/.test(prefix)) {
      fail('NYL-USAGE', `--prefix ${prefix} is not a ref namespace such as refs/nyl/`, {
        fix: 'pass --prefix refs/<name>/ ending in a slash, such as --prefix refs/heads/nyl-run/',
      });
    }
    const { doctorHost } = await import('./doctor-host');
    return doctorHost(rt, { url: p.path, ...(prefix !== undefined ? { prefix } : {}) });
  },
  async renderer() {
    return (await import('./render')).renderDoctorHost;
  },
});
