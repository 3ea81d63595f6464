/**
 * The web view's addresses, parsed without I/O. A path either names one of these routes or is
 * not found: there is no fallback to files, and a segment that does not decode (bad percent
 * escapes) is a bad request.
 *
 *   /                                    the environments
 *   /environments/ENV                    an environment: its units, graph and latest operations
 *   /environments/ENV/units/UNIT         a unit
 *   /environments/ENV/history[?all=1]    the history
 *   /environments/ENV/runs/RUN           one run's operations and units
 *   /open?environment=NAME               the form of the first page: redirects to the environment
 *   /version[?environment=ENV]           the version of the state refs (the refresh script asks)
 *   /assets/NAME                         the assets of assets.ts
 */
export type Route =
  | { page: 'environments' }
  | { page: 'environment'; env: string }
  | { page: 'unit'; env: string; unit: string }
  | { page: 'history'; env: string; all: boolean }
  | { page: 'run'; env: string; run: string }
  | { page: 'open'; env: string }
  | { page: 'version'; env?: string }
  | { page: 'asset'; path: string }
  | { page: 'not-found' }
  | { page: 'bad-request'; why: string };

function segmentsOf(pathname: string): string[] | undefined {
  const raw = pathname.split('/').slice(1);
  if (raw.length > 1 && raw[raw.length - 1] === '') raw.pop();
  try {
    return raw.map((s) => decodeURIComponent(s));
  } catch {
    return undefined;
  }
}

function environmentRoute(rest: string[], query: URLSearchParams): Route {
  const [env, section, name, ...extra] = rest;
  if (!env || extra.length > 0) return { page: 'not-found' };
  if (section === undefined) return { page: 'environment', env };
  if (section === 'history' && name === undefined) return { page: 'history', env, all: query.get('all') === '1' };
  if (section === 'units' && name) return { page: 'unit', env, unit: name };
  if (section === 'runs' && name) return { page: 'run', env, run: name };
  return { page: 'not-found' };
}

/** The route of a request target such as `/environments/dev?x=1`. */
export function routeOf(target: string): Route {
  let url: URL;
  try {
    url = new URL(target, 'http://nyl.invalid');
  } catch {
    return { page: 'bad-request', why: 'the request target is not a path' };
  }
  // An absolute-form target (`GET http://elsewhere/...`) names another origin.
  if (!target.startsWith('/')) return { page: 'bad-request', why: 'the request target is not a path' };
  const segments = segmentsOf(url.pathname);
  if (!segments) return { page: 'bad-request', why: 'the path has a malformed percent escape' };
  const [first, ...rest] = segments;
  if (segments.length === 1 && first === '') return { page: 'environments' };
  if (first === 'environments') return environmentRoute(rest, url.searchParams);
  if (first === 'assets' && rest.length === 1) return { page: 'asset', path: url.pathname };
  if (first === 'version' && rest.length === 0) {
    const env = url.searchParams.get('environment') ?? undefined;
    return env ? { page: 'version', env } : { page: 'version' };
  }
  if (first === 'open' && rest.length === 0) {
    const env = url.searchParams.get('environment')?.trim();
    return env ? { page: 'open', env } : { page: 'bad-request', why: 'the form names no environment' };
  }
  return { page: 'not-found' };
}
