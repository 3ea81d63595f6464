/**
 * The web view's HTTP server (`nyl ui`): read-only pages rendered from the state refs on every
 * request, and server-sent events that tell open pages when the refs changed.
 *
 * What keeps it read-only and safe to leave running:
 * - It answers GET only (405 with `Allow: GET` otherwise): no request can change anything.
 * - On a loopback address it answers only requests whose Host is that loopback address, so a web
 *   page elsewhere cannot read it through DNS rebinding.
 * - Pages are built by src/ui/html.ts (every value escaped), under a Content-Security-Policy that
 *   allows only this server's own script and stylesheet; assets come from a fixed table, never
 *   from a file named by the request.
 * - Reads run one at a time, so two pages never fetch into the same cache repository at once.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ASSETS } from './assets';
import { type Answer, answerOf } from './pages';
import { type Route, routeOf } from './routes';
import type { ViewSource } from './source';
import { RefsWatcher } from './watch';

export interface UiServerOptions {
  host: string;
  port: number;
  /** How often open pages' refs are read while a page listens for changes. */
  pollMs: number;
  /** Where unexpected failures are reported (stderr), besides the 500 page. */
  log: (line: string) => void;
}

export interface UiServer {
  url: string;
  close(): Promise<void>;
}

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

/** Is this a loopback address, whose Host header can be checked? */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The Host values a loopback server answers: its address, `localhost` and `[::1]`, with its port. */
export function hostAllowed(hostHeader: string | undefined, listenHost: string, port: number): boolean {
  if (!isLoopback(listenHost)) return true;
  const names = new Set([listenHost.includes(':') ? `[${listenHost}]` : listenHost, 'localhost', '127.0.0.1', '[::1]']);
  return hostHeader !== undefined && [...names].some((n) => hostHeader.toLowerCase() === `${n}:${port}`);
}

function send(res: ServerResponse, answer: Answer): void {
  res.writeHead(answer.status, { ...SECURITY_HEADERS, 'content-type': answer.type, ...(answer.headers ?? {}) });
  res.end(answer.body);
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

class UiHandler {
  readonly watcher: RefsWatcher;
  /** Instances (of EnvironmentTemplates) a page was served for: watched from then on, with the declared environments. */
  private readonly instances = new Set<string>();
  private readonly run = serialized();

  constructor(
    private readonly source: ViewSource,
    private readonly options: UiServerOptions,
    private readonly port: () => number,
  ) {
    this.watcher = new RefsWatcher(() => this.run(() => source.version([...this.instances])), options.pollMs);
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET') return send(res, { status: 405, type: 'text/plain; charset=utf-8', body: 'nyl ui is read-only: it answers GET only.\n', headers: { allow: 'GET' } });
    if (!hostAllowed(req.headers.host, this.options.host, this.port())) {
      return send(res, { status: 403, type: 'text/plain; charset=utf-8', body: 'nyl ui answers only requests addressed to its loopback address.\n' });
    }
    const route = routeOf(req.url ?? '/');
    if (route.page === 'events') return this.watcher.subscribe(req, res, SECURITY_HEADERS);
    if (route.page === 'asset') return send(res, assetAnswer(route.path));
    send(res, await this.pageAnswer(route));
  }

  private async pageAnswer(route: Exclude<Route, { page: 'events' | 'asset' }>): Promise<Answer> {
    try {
      const answer = await this.run(async () => answerOf(route, this.source, await this.source.version([...this.instances, ...envOf(route)])));
      if (answer.status === 200) for (const env of envOf(route)) this.instances.add(env);
      return answer;
    } catch (error) {
      this.options.log(`nyl ui: ${(error as Error)?.stack ?? String(error)}`);
      return { status: 500, type: 'text/plain; charset=utf-8', body: 'nyl ui failed to read this page; its error is on the terminal that runs nyl ui.\n' };
    }
  }
}

function envOf(route: Route): string[] {
  return 'env' in route ? [route.env] : [];
}

function assetAnswer(path: string): Answer {
  const asset = ASSETS.get(path);
  return asset ? { status: 200, type: asset.type, body: asset.body } : { status: 404, type: 'text/plain; charset=utf-8', body: 'Not found.\n' };
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
  let port = options.port;
  const handler = new UiHandler(source, options, () => port);
  const server = createServer((req, res) => {
    handler.handle(req, res).catch((error: unknown) => {
      options.log(`nyl ui: ${(error as Error)?.stack ?? String(error)}`);
      if (!res.headersSent) send(res, { status: 500, type: 'text/plain; charset=utf-8', body: 'nyl ui failed.\n' });
    });
  });
  const address = await listen(server, options.host, options.port);
  port = address.port;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${port}/`,
    close: async () => {
      handler.watcher.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
