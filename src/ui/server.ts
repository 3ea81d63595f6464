/**
 * The web view's HTTP server (`nyl ui`): read-only pages rendered from the state refs on every
 * request, and /version, which open pages ask to know when the refs changed.
 *
 * What keeps it read-only and safe to leave running:
 * - It answers GET and HEAD only (405 with `Allow: GET, HEAD` otherwise): no request can change
 *   anything. HEAD gets what GET would, status and headers (a Content-Length too), without the body.
 * - It answers only requests whose Host names it (host-policy.ts): on loopback its loopback
 *   addresses and `localhost`, so that a web page elsewhere cannot read it through DNS
 *   rebinding; on another address also IP literals, this machine's name and `--allow-host`.
 * - A request another site's page makes (fetch metadata: `Sec-Fetch-Site` cross-site or
 *   same-site) is refused unless it is the user opening a page (a top-level navigation), so no
 *   page elsewhere can make it read state by embedding its addresses. A browser that sends no
 *   fetch metadata still sends Origin with a scripted request: a foreign one is refused alike.
 * - Pages are built by src/ui/html.ts (every value escaped), under a Content-Security-Policy that
 *   allows only this server's own scripts and stylesheet; assets come from a fixed table, never
 *   from a file named by the request.
 * - Reads run one at a time, so two pages never fetch into the same cache repository at once;
 *   once the server closes, reads still queued do not start.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ASSETS } from './assets';
import { hostAllowed, type HostPolicy, hostPolicyOf, originMatchesHost } from './host-policy';
import { type Answer, answerOf, type PageRoute, plainAnswer, problemPage, RETRY_SECONDS, TEXT_TYPE } from './pages';
import type { Live } from './parts';
import { routeOf } from './routes';
import { EnvironmentReads } from './environment-reads';
import { type GuardedSource, guardedSource, type ViewSource } from './source';
import { VersionCache } from './version-cache';

interface UiServerOptions {
  host: string;
  port: number;
  /** How often an open page asks whether the refs changed; a version is read at most this often. */
  pollMs: number;
  /** Host names answered besides the defaults (`--allow-host`: the name of a proxy in front). */
  allowHosts: readonly string[];
  /** Where unexpected failures are reported (stderr), besides the 500 page. */
  log: (line: string) => void;
  /** How one environment's reads are cut and their failures remembered (tests shorten them). */
  reads?: EnvironmentReads;
}

interface UiServer {
  url: string;
  /** Is the address it listens on a loopback address? */
  loopback: boolean;
  close(): Promise<void>;
}

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

/** Writes the answer; to HEAD without its body, its headers (Content-Length included) as GET gets them. */
function send(res: ServerResponse, answer: Answer, head: boolean): void {
  res.writeHead(answer.status, {
    ...SECURITY_HEADERS,
    'content-type': answer.type,
    'content-length': String(Buffer.byteLength(answer.body)),
    ...(answer.headers ?? {}),
  });
  res.end(head ? undefined : answer.body);
}

/** Runs reads one after another: each starts when the one before it settled. */
export function serialized(): <T>(read: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(read: () => Promise<T>) => {
    const next = tail.then(read, read);
    tail = next.catch(() => undefined);
    return next;
  };
}

/**
 * Fetch metadata says another site's page made this request: allowed only as the user's own
 * navigation to a page (a link clicked elsewhere), never as an embedded or scripted request.
 */
export function foreignRequest(headers: IncomingMessage['headers']): boolean {
  const site = headers['sec-fetch-site'];
  // No fetch metadata (an older browser, curl): a browser's scripted request still says its Origin.
  if (site === undefined) return headers.origin !== undefined && !originMatchesHost(headers.origin, headers.host);
  if (site === 'same-origin' || site === 'none') return false;
  return !(headers['sec-fetch-mode'] === 'navigate' && headers['sec-fetch-dest'] === 'document');
}

class UiHandler {
  readonly versions: VersionCache;
  policy: HostPolicy | undefined;
  closed = false;
  private readonly run = serialized();
  private readonly reads: EnvironmentReads;
  private readonly source: GuardedSource;

  constructor(
    source: ViewSource,
    private readonly options: UiServerOptions,
  ) {
    const reads = options.reads ?? new EnvironmentReads();
    this.reads = reads;
    this.source = guardedSource(source, (environment, read) => reads.read(environment, read));
    this.versions = new VersionCache((env) => this.read(() => this.source.version(env)), options.pollMs);
  }

  /** One read of the source, after those before it; none once the server closed. */
  private read<T>(fn: () => Promise<T>): Promise<T> {
    return this.run(() => (this.closed ? Promise.reject(new Error('nyl ui is closing')) : fn()));
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    send(res, await this.answer(req), req.method === 'HEAD');
  }

  /** The answer to a request: HEAD is answered as GET (send leaves the body out). */
  private async answer(req: IncomingMessage): Promise<Answer> {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return { status: 405, type: TEXT_TYPE, body: 'nyl ui is read-only: it answers GET and HEAD only.\n', headers: { allow: 'GET, HEAD' } };
    if (!hostAllowed(req.headers.host, this.policy!))
      return { status: 403, type: TEXT_TYPE, body: 'nyl ui answers only requests addressed to it by one of its own names (see --allow-host).\n' };
    if (foreignRequest(req.headers)) return { status: 403, type: TEXT_TYPE, body: "nyl ui answers another site's page only when it opens one of its pages.\n" };
    const route = routeOf(req.url ?? '/');
    switch (route.page) {
      case 'asset':
        return assetAnswer(route.path);
      case 'version':
        return this.versionAnswer(route.env);
      case 'open':
      case 'bad-request':
      case 'not-found':
        return plainAnswer(route);
      default:
        return this.pageAnswer(route);
    }
  }

  private async versionAnswer(env: string | undefined): Promise<Answer> {
    try {
      return { status: 200, type: TEXT_TYPE, body: await this.versions.get(env) };
    } catch {
      // The refs cannot be read just now: the page says so and asks again.
      return { status: 503, type: TEXT_TYPE, body: 'the state refs cannot be read just now\n' };
    }
  }

  /** The page, with the version of the refs read before its data (a change in between costs one more reload, never a stale page). */
  private async pageAnswer(route: PageRoute): Promise<Answer> {
    const env = 'env' in route ? route.env : undefined;
    try {
      const version = await this.versions.fresh(env).catch(() => undefined);
      const live: Live | undefined =
        version === undefined ? undefined : { version, pollMs: this.options.pollMs, ...(env !== undefined ? { environment: env } : {}) };
      return await this.read(() => answerOf(route, this.source, live, (name) => this.reads.failure(name)));
    } catch (error) {
      if (!this.closed) this.options.log(`nyl ui: ${(error as Error)?.stack ?? String(error)}`);
      return problemPage(500, 'nyl ui failed to read this page', { retrySeconds: RETRY_SECONDS });
    }
  }
}

function assetAnswer(path: string): Answer {
  const asset = ASSETS.get(path);
  return asset ? { status: 200, type: asset.type, body: asset.body } : { status: 404, type: TEXT_TYPE, body: 'Not found.\n' };
}

function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** Starts the server; the promise rejects with the listen error (EADDRINUSE, EADDRNOTAVAIL...). */
export async function startUiServer(source: ViewSource, options: UiServerOptions): Promise<UiServer> {
  const handler = new UiHandler(source, options);
  const server = createServer((req, res) => {
    handler.handle(req, res).catch((error: unknown) => {
      options.log(`nyl ui: ${(error as Error)?.stack ?? String(error)}`);
      if (!res.headersSent) send(res, { status: 500, type: TEXT_TYPE, body: 'nyl ui failed.\n' }, req.method === 'HEAD');
    });
  });
  const address = await listen(server, options.host, options.port);
  handler.policy = hostPolicyOf(address, options.allowHosts);
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/`,
    loopback: handler.policy.loopback,
    close: async () => {
      handler.closed = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
