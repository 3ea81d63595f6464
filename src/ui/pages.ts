/**
 * From a route to an answer: reads what the page shows through the view source and renders it.
 * An environment that cannot be opened is a page of its own (404 for an unknown one, with the
 * environments that exist), not a failure of the server; so is a unit that state does not hold,
 * and a run that nothing in state names.
 */
import type { Diagnostic } from '../errors/diagnostic';
import { NylError } from '../errors/diagnostic';
import { html, type Html, render } from './html';
import { environmentPageOf } from './page-environment';
import { environmentsPage } from './page-environments';
import { HISTORY_PAGE_SIZE, historyPageOf, runKnown, runPageOf } from './page-history';
import { unitPageOf } from './page-unit';
import { diagnostics, environmentHref, type Live, page, unreadable } from './parts';
import type { Route } from './routes';
import type { FailureOf } from './environment-reads';
import type { GuardedSource } from './source';

export interface Answer {
  status: number;
  type: string;
  body: string;
  headers?: Record<string, string>;
}

/** The routes answered by a page read through the source. */
export type PageRoute = Extract<Route, { page: 'environments' | 'environment' | 'unit' | 'history' | 'run' }>;

const HTML_TYPE = 'text/html; charset=utf-8';
export const TEXT_TYPE = 'text/plain; charset=utf-8';

function ok(markup: ReturnType<typeof html>): Answer {
  return { status: 200, type: HTML_TYPE, body: render(markup) };
}

/** What a problem page says besides its title. */
interface Problem {
  diagnostics?: readonly Diagnostic[];
  /** A sentence, for a problem without a diagnostic (a run no operation names). */
  text?: string;
  /** Why an environment shows nothing (unreadable()), above the diagnostics. */
  failure?: Html;
  retrySeconds?: number;
}

/**
 * A page that says what went wrong, with the diagnostics' fixes. It shows no state, so it is not
 * refreshed by version; `retrySeconds` reloads it (a failure that may pass, such as a host that
 * cannot be reached), so that an open tab recovers by itself.
 */
export function problemPage(status: number, title: string, problem: Problem = {}): Answer {
  const { retrySeconds } = problem;
  const retry =
    retrySeconds === undefined
      ? ''
      : problem.failure
        ? html`<p class="muted">This page reloads itself then.</p>`
        : html`<p class="muted">This page tries again every ${retrySeconds} seconds.</p>`;
  const text = problem.text !== undefined ? html`<p>${problem.text}</p>` : '';
  const body = html`<h1>${title}</h1>${text}${problem.failure ?? ''}${diagnostics(problem.diagnostics ?? [])}${retry}<p><a href="/">All environments</a></p>`;
  const headers = retrySeconds !== undefined ? { refresh: String(retrySeconds) } : undefined;
  return { status, type: HTML_TYPE, body: render(page({ title, crumbs: [[title, '']], live: undefined, body })), ...(headers ? { headers } : {}) };
}

async function pageOf(route: PageRoute, source: GuardedSource, live: Live | undefined, failureOf: FailureOf): Promise<Answer> {
  switch (route.page) {
    case 'environments':
      return ok(environmentsPage(await source.overview(), live, failureOf));
    case 'environment':
      return ok(environmentPageOf(await source.environment(route.env), live));
    case 'unit': {
      const data = await source.unit(route.env, route.unit);
      const unknown = data.show.errors.filter((d) => d.code === 'NYL-UNIT-UNKNOWN');
      return unknown.length > 0 ? problemPage(404, 'No such unit', { diagnostics: unknown }) : ok(unitPageOf(data, live));
    }
    case 'history':
      return ok(historyPageOf(await source.history(route.env, route.all ? 0 : HISTORY_PAGE_SIZE), route.all, live));
    case 'run': {
      const data = await source.run(route.env, route.run);
      if (runKnown(data, route.run)) return ok(runPageOf(route.env, route.run, data, live));
      return problemPage(404, 'No such run', {
        text: `No operation of ${route.env} carries the run ${route.run}, no unit names it, and it does not hold the lease.`,
      });
    }
  }
}

/**
 * The answer to a page route; an environment that cannot be opened answers with its diagnostics.
 * One whose failure is remembered (environment-reads.ts) says when it was read and when it will be
 * read again, and the page reloads itself then.
 */
export async function answerOf(route: PageRoute, source: GuardedSource, live: Live | undefined, failureOf: FailureOf = () => undefined): Promise<Answer> {
  try {
    return await pageOf(route, source, live, failureOf);
  } catch (error) {
    if (!(error instanceof NylError)) throw error;
    if (error.diagnostics.some((d) => d.code === 'NYL-ENVIRONMENT-UNKNOWN')) return problemPage(404, 'No such environment', { diagnostics: error.diagnostics });
    const failure = 'env' in route ? failureOf(route.env) : undefined;
    if (!failure || !('env' in route)) return problemPage(500, 'This page cannot be read', { diagnostics: error.diagnostics, retrySeconds: RETRY_SECONDS });
    const retrySeconds = Math.max(1, Math.ceil(failure.retryInMs / 1000));
    return problemPage(503, `${route.env} cannot be read just now`, { diagnostics: error.diagnostics, failure: unreadable(route.env, failure), retrySeconds });
  }
}

/** How often a page that failed to read tries again. */
export const RETRY_SECONDS = 10;

/** The answers that need no read: a redirect of the form, a bad request, nothing found. */
export function plainAnswer(route: Extract<Route, { page: 'open' | 'bad-request' | 'not-found' }>): Answer {
  switch (route.page) {
    case 'open':
      return { status: 303, type: TEXT_TYPE, body: '', headers: { location: environmentHref(route.env) } };
    case 'bad-request':
      return { status: 400, type: TEXT_TYPE, body: `Bad request: ${route.why}.\n` };
    case 'not-found':
      return { status: 404, type: TEXT_TYPE, body: 'Not found.\n' };
  }
}
