/**
 * HTML built so that nothing is shown unescaped: every value interpolated into the `html` tag is
 * escaped for text and for double-quoted attribute values alike, unless it is already Html (a
 * fragment this module built, recognised by a private symbol). There is no other way to make Html
 * from a string than `html`'s literal parts, so a unit name, an output value, a commit message or
 * a condition reaches the page as text, whatever it holds.
 */

const HTML_BRAND = Symbol('nyl.html');

/** A fragment of markup built by `html`. */
export interface Html {
  readonly [HTML_BRAND]: true;
  readonly markup: string;
}

/** What may be interpolated: text (escaped), numbers, fragments, lists of them; nothing for null, undefined and false. */
export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as it must appear between tags or inside a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function isHtml(value: unknown): value is Html {
  return typeof value === 'object' && value !== null && (value as Html)[HTML_BRAND] === true;
}

function markupOf(value: HtmlValue): string {
  if (value === null || value === undefined || value === false || value === true) return '';
  if (Array.isArray(value)) return value.map(markupOf).join('');
  // Only a fragment built here passes as markup: any other object (a value from state shaped like
  // one) is text, whatever fields it has.
  if (isHtml(value)) return value.markup;
  return escapeHtml(String(value));
}

function fragment(markup: string): Html {
  return { [HTML_BRAND]: true, markup };
}

/** The tag: literal parts are markup, every interpolated value is escaped unless it is Html. */
export function html(parts: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = parts[0]!;
  for (let i = 0; i < values.length; i++) out += markupOf(values[i]!) + parts[i + 1]!;
  return fragment(out);
}

/** Several fragments as one. */
export function join(items: readonly HtmlValue[], separator: HtmlValue = ''): Html {
  return fragment(items.map(markupOf).join(markupOf(separator)));
}

/** The page's final text. */
export function render(value: Html): string {
  return value.markup;
}

/** A path of this server from its segments, each percent-encoded: `pathOf('environments', 'pr/1')` is `/environments/pr%2F1`. */
export function pathOf(...segments: string[]): string {
  return `/${segments.map((s) => encodeURIComponent(s)).join('/')}`;
}
