/**
 * The one duration grammar of Nyl, for source (`timeout`, `lease.duration`) and the command line
 * (`--wait-lease`) alike: whole numbers with the units d, h, m, s and ms, largest first, each at
 * most once, such as `500ms`, `30s`, `10m`, `1h30m` or `2d`.
 */
const DURATION = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;

/** The grammar as a JSON Schema pattern (published with the source schema). */
export const DURATION_PATTERN = '^(?=\\d)(?:\\d+d)?(?:\\d+h)?(?:\\d+m)?(?:\\d+s)?(?:\\d+ms)?$';

/** Milliseconds of a duration, or undefined when the text does not follow the grammar. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text);
  if (!m || text === '') return undefined;
  const [d, h, min, s, ms] = [m[1], m[2], m[3], m[4], m[5]].map((x) => (x === undefined ? 0 : Number(x)));
  return (((d! * 24 + h!) * 60 + min!) * 60 + s!) * 1000 + ms!;
}
