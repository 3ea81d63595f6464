// How large the repeated and randomized end-to-end campaigns are.
//
// `npm test` runs each campaign at its quick size: every path a campaign exercises runs at least
// once, so a regression there fails the suite, and the whole suite stays within its time budget;
// the protocol those campaigns test is covered point by point in process (test/protocol/).
// `npm run test:campaigns` sets NYL_CAMPAIGN=full and runs the sizes that find rare interleavings:
// tens of trials and rounds, every crash point over every transport. A campaign's own variable
// (NYL_CRASH_TRIALS, NYL_HOLD_TRIALS, ...) overrides both sizes.

/** True under `npm run test:campaigns`. */
export const FULL_CAMPAIGNS = process.env.NYL_CAMPAIGN === 'full';

/**
 * The size of one campaign: `variable` when it is set to a count, else `full` under
 * NYL_CAMPAIGN=full, else `quick`. A variable that is set but not a count is an error, not a
 * silent default: a campaign asked for must run as asked.
 */
export function campaignSize(variable, { quick, full }) {
  const set = process.env[variable];
  if (set === undefined || set === '') return FULL_CAMPAIGNS ? full : quick;
  const n = Number(set);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${variable}=${set} is not a count of trials`);
  return n;
}
