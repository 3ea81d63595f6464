// A hand-built project holding one Environment, for tests that resolve a state location
// (resolveLocation) without loading source.

/** The project and its one Environment `envName`, with `state` as its spec.state when given. */
export function projectWith(envName, state) {
  const environment = {
    kind: 'Environment',
    name: envName,
    labels: {},
    origin: { file: 'nyl.yaml', line: 1, pointer: '', document: 0 },
    spec: { values: {}, driftRepair: 'converge', dependsOn: [], lease: { durationMs: 300000 }, ...(state ? { state } : {}) },
  };
  const project = { root: '/project', environments: new Map([[envName, environment]]), repositories: new Map(), groups: new Map(), units: new Map() };
  return { project, environment };
}
