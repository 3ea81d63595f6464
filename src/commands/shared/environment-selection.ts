/**
 * The environment selection of the multi-environment commands (reconcile, plan, status,
 * teardown, verify), as the CLI and the orchestration of a multi-environment run see it. The
 * deciding logic is pure and lives in project/environment-selection.ts; the CLI, which may not
 * import project/, reaches it through this module.
 */
export {
  type EnvironmentOrder,
  type EnvironmentSelection,
  type EnvironmentSelector,
  type LookupEnvironment,
  type UnitsByEnvironment,
  declaredEnvironments,
  dependentsFirst,
  orderEnvironments,
  parseLabelSelector,
  qualifiedUnits,
  resolveSelection,
  selectEnvironments,
  unitsByEnvironment,
} from '../../project/environment-selection';
export { mostSevereExit as environmentsExit } from '../../errors/severity';
