/**
 * `nyl ui`: starts the web view's server (src/ui/) over the project at PATH, prints where it
 * listens, and serves until SIGINT or SIGTERM, then closes every connection and exits 0.
 *
 * The address defaults to 127.0.0.1:4780. Another host is allowed (a team may serve it behind a
 * proxy, whose name --allow-host adds) but warned about: the pages show what state holds (units,
 * plain outputs, rendered specs, failure output, history), never a sensitive value, to whoever
 * reaches them.
 */
import { type Diagnostic, diagnostic, fail, NylError } from '../errors/diagnostic';
import { startUiServer } from './server';
import { stateRefsSource } from './source';
import { parseDuration } from '../util/duration';
import type { Runtime } from '../util/runtime';
import type { CommandIo, ParsedCommand } from '../commands/command';

const DEFAULT_UI_HOST = '127.0.0.1';
const DEFAULT_UI_PORT = 4780;
const DEFAULT_POLL_MS = 2_000;

/** `--listen`: `host:port`, `[v6]:port`, or a bare port on 127.0.0.1. */
export function listenAddressOf(text: string | undefined): { host: string; port: number } {
  if (text === undefined) return { host: DEFAULT_UI_HOST, port: DEFAULT_UI_PORT };
  const m = /^(?:(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):)?(\d{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) {
    fail('NYL-USAGE', `--listen ${text} is not an address such as 127.0.0.1:4780`, {
      fix: 'pass --listen <host>:<port>, such as --listen 127.0.0.1:4780, or --listen 127.0.0.1:0 for any free port',
    });
  }
  return { host: m[1] ?? m[2] ?? DEFAULT_UI_HOST, port };
}

function pollMsOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_POLL_MS;
  const ms = parseDuration(text);
  if (ms === undefined || ms < 100 || ms > 3_600_000) {
    fail('NYL-USAGE', `--poll-interval ${text} is not a duration between 100ms and 1h`, { fix: 'pass --poll-interval <duration>, such as --poll-interval 5s' });
  }
  return ms;
}

/** --allow-host: host names (a proxy's), each a DNS name. */
function listOf(value: unknown): string[] {
  const names = Array.isArray(value) ? value.map(String) : typeof value === 'string' ? [value] : [];
  for (const name of names) {
    if (!/^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(name))
      fail('NYL-USAGE', `--allow-host ${name} is not a host name`, {
        fix: 'pass --allow-host <name> with a DNS name such as nyl.internal.example.com, without a port or scheme',
      });
  }
  return names;
}

async function listening(rt: Runtime, p: ParsedCommand, host: string, port: number) {
  const local = p.values.local === true;
  const log = (line: string) => process.stderr.write(`${line}\n`);
  try {
    const allowHosts = listOf(p.values['allow-host']);
    return await startUiServer(stateRefsSource(rt, p.path, local), {
      host,
      port,
      pollMs: pollMsOf(p.values['poll-interval'] as string | undefined),
      allowHosts,
      log,
    });
  } catch (error) {
    if (error instanceof NylError) throw error;
    const e = error as NodeJS.ErrnoException;
    throw new NylError(
      diagnostic('NYL-UI-LISTEN', 'error', `nyl ui cannot listen on ${host}:${port}: ${e.code ?? ''} ${e.message}`.replace(/\s+/g, ' '), {
        host,
        data: { host, port, cause: e.code },
      }),
    );
  }
}

/**
 * NYL-UI-EXPOSED: what the pages show, said plainly, since whoever reaches the address reads
 * them without authenticating. Keep it true to src/ui/page-*.ts: the first page lists every
 * environment, a unit's page its plain outputs and rendered documents (env values included) and a
 * failure's last lines of output, the history who asked and why.
 */
export function exposedWarning(host: string): Diagnostic {
  return diagnostic(
    'NYL-UI-EXPOSED',
    'warning',
    `nyl ui listens on ${host}, which is not a loopback address, and has no authentication: it shows every environment's units, ` +
      'their plain outputs, rendered specs (env values included), failure output, leases and history (who asked, and why) ' +
      'to anyone who can reach it; sensitive values are never shown',
  );
}

/** Serves until the runtime's cancel signal (SIGINT/SIGTERM); returns the exit code. */
export async function serve(rt: Runtime, p: ParsedCommand, io: CommandIo): Promise<number> {
  const { host, port } = listenAddressOf(p.values.listen as string | undefined);
  const server = await listening(rt, p, host, port);
  if (!server.loopback) io.warn([exposedWarning(host)]);
  process.stdout.write(`nyl ui: serving ${p.path === '.' ? 'this project' : p.path} at ${server.url} (read-only; Ctrl-C stops it)\n`);
  await new Promise<void>((resolve) => (rt.cancel.aborted ? resolve() : rt.cancel.addEventListener('abort', () => resolve(), { once: true })));
  await server.close();
  return 0;
}
