/**
 * From a route to an answer: reads what the page shows through the view source and renders it.
 * An environment that cannot be opened is a page of its own (404 for an unknown one, with the
 * environments that exist), not a failure of the server.
 */
import type { Diagnostic } from '../errors/diagnostic';
import { NylError } from '../errors/diagnostic';
import { html, render } from './html';
import { environmentPageOf } from './page-environment';
import { environmentsPage } from './page-environments';
import { HISTORY_PAGE_SIZE, historyPageOf, runPageOf } from './page-history';
import { unitPageOf } from './page-unit';
import { diagnostics, environmentHref, page } from './parts';
import type { Route } from './routes';
import type { ViewSource } from './source';

export interface Answer {
  status: number;
  type: string;
  body: string;
  headers?: Record<string, string>;
}

const HTML_TYPE = 'text/html; charset=utf-8';

function ok(markup: ReturnType<typeof html>): Answer {
  return { status: 200, type: HTML_TYPE, body: render(markup) };
}

/** A page that says what went wrong, with the diagnostics' fixes; it shows no state, so it does not refresh. */
export function problemPage(status: number, title: string, list: readonly Diagnostic[]): Answer {
  const body = html`<h1>${title}</h1>${diagnostics(list)}<p><a href="/">All environments</a></p>`;
  return { status, type: HTML_TYPE, body: render(page({ title, crumbs: [[title, '']], version: undefined, body })) };
}

async function pageOf(route: Exclude<Route, { page: 'events' | 'asset' }>, source: ViewSource, version: string): Promise<Answer> {
  switch (route.page) {
    case 'environments':
      return ok(environmentsPage(await source.overview(), version));
    case 'environment':
      return ok(environmentPageOf(await source.environment(route.env), version));
    case 'unit':
      return ok(unitPageOf(await source.unit(route.env, route.unit), version));
    case 'history':
      return ok(historyPageOf(await source.history(route.env, route.all ? 0 : HISTORY_PAGE_SIZE), route.all, version));
    case 'run':
      return ok(runPageOf(route.env, route.run, await source.run(route.env, route.run), version));
    case 'open':
      return { status: 303, type: 'text/plain; charset=utf-8', body: '', headers: { location: environmentHref(route.env) } };
    case 'bad-request':
      return { status: 400, type: 'text/plain; charset=utf-8', body: `Bad request: ${route.why}.\n` };
    case 'not-found':
      return { status: 404, type: 'text/plain; charset=utf-8', body: 'Not found.\n' };
  }
}

/** The answer to a page route; an environment that cannot be opened answers with its diagnostics. */
export async function answerOf(route: Exclude<Route, { page: 'events' | 'asset' }>, source: ViewSource, version: string): Promise<Answer> {
  try {
    return await pageOf(route, source, version);
  } catch (error) {
    if (!(error instanceof NylError)) throw error;
    const unknown = error.diagnostics.some((d) => d.code === 'NYL-ENVIRONMENT-UNKNOWN');
    return problemPage(unknown ? 404 : 500, unknown ? 'No such environment' : 'This page cannot be read', error.diagnostics);
  }
}
