/**
 * The CLI's door to the one place that decides exit codes (src/report/exit-code.ts): the pure
 * rules live with the reports, so that operations (a multi-environment run deciding which
 * environments are blocked) use the same copy without importing the CLI.
 */
export { exitCodeOf, exitOfDiagnostic, worst } from '../report/exit-code';
