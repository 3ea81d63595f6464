'use strict';
// Preloaded into a measured nyl process (`node -r bench/maxrss.cjs bin/nyl ...`) by the memory-5000
// scenario: when the process exits, writes its own peak resident set size in KiB
// (process.resourceUsage().maxRSS, getrusage RUSAGE_SELF) to the file named by BENCH_MAXRSS_FILE.
// Node built-ins only; CommonJS because `node -r` requires it.
const file = process.env.BENCH_MAXRSS_FILE;
if (file) {
  process.on('exit', () => {
    try {
      require('node:fs').writeFileSync(file, `${process.resourceUsage().maxRSS}\n`);
    } catch {
      /* the scenario reports a missing figure */
    }
  });
}
