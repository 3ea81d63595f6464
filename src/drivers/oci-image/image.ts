/**
 * The prepare phase of an OciImage unit: the image reference resolved to an immutable one, so
 * that the execution key changes exactly when the image does, and the desired document records
 * which image ran.
 *
 * Which form is recorded:
 * - A reference that already ends in `@sha256:<digest>` is kept as written: it is immutable, and
 *   resolving it asks nothing of the machine.
 * - Otherwise the runtime inspects the local image (never pulling) and the recorded reference is
 *   `REPOSITORY@sha256:<manifest digest>`, one of the image's repo digests for the repository the
 *   reference names (a short name such as `busybox:1` matches `docker.io/library/busybox`).
 *   For a pulled image that digest is the registry's, the same on every machine, and `podman pull
 *   REPOSITORY@sha256:...` fetches exactly that image; podman records one for images it imports,
 *   loads or builds too. It is recorded only once the runtime finds the image by it, so that
 *   `run --pull=never` can run what prepare recorded.
 * - When the image has no such repo digest (docker's images built or loaded locally), the image
 *   ID, `sha256:<id>`: the digest of its configuration, as immutable and as runnable, but it
 *   names no repository, so it cannot be pulled elsewhere.
 * An image not present locally is `absent`, with the failure (retryable) that says how to make it
 * present: Nyl never pulls, so what runs is what the operator put on the machine. Absent is not a
 * failure by itself: the planner keeps a current unit on the image its desired document recorded,
 * and fails one that must execute.
 */
import { type Absent, type DriverContext, type Failure, failure } from '../contract';
import { type Runtime, runHelper, runtimeError } from './runtime';

const DIGEST_REFERENCE = /@sha256:[0-9a-f]{64}$/;

/** How podman and docker say that an image is not on this machine. */
export const NOT_PRESENT = /image not known|no such (image|object)|unable to find image/i;

interface Inspected {
  id: string;
  digest: string | undefined;
  repoDigests: string[];
}

/**
 * Resolutions made in a run, by run, runtime and image: units of one run that share an image ask
 * the runtime once (a `podman image inspect` costs a process of ~100 ms). Bounded: a long-lived
 * process of many runs keeps only the latest.
 */
const resolutions = new Map<string, Promise<Resolution>>();
const MAX_RESOLUTIONS = 256;

/** The image as the recorded rendering names it; absent from this machine; or why it cannot be resolved. */
type Resolution = { image: string } | Absent | Failure;

export function resolveImage(image: string, runtime: Runtime, ctx: DriverContext): Promise<Resolution> {
  if (DIGEST_REFERENCE.test(image)) return Promise.resolve({ image });
  const key = `${ctx.run}\0${runtime}\0${image}`;
  let resolving = resolutions.get(key);
  if (!resolving) {
    resolving = resolveNow(image, runtime, ctx);
    resolutions.set(key, resolving);
    if (resolutions.size > MAX_RESOLUTIONS) resolutions.delete(resolutions.keys().next().value!);
  }
  return resolving;
}

async function resolveNow(image: string, runtime: Runtime, ctx: DriverContext): Promise<Resolution> {
  const inspected = await inspect(image, runtime, ctx);
  if ('result' in inspected) return inspected;
  const candidate = repoDigestOf(image, inspected);
  if (candidate) {
    // Only a reference the runtime finds is recorded: run --pull=never resolves it the same way.
    const check = await inspect(candidate, runtime, ctx);
    if (!('result' in check) && check.id === inspected.id) return { image: candidate };
  }
  return { image: `sha256:${inspected.id}` };
}

/** `RUNTIME image inspect`, as data: the image's id (hex), manifest digest and repo digests; or absent. */
async function inspect(image: string, runtime: Runtime, ctx: DriverContext): Promise<Inspected | Absent | Failure> {
  const done = await runHelper(ctx, [runtime, 'image', 'inspect', image], { cancel: ctx.cancel });
  if (done.spawnError) return failure(`cannot start ${runtime} to resolve image ${image}: ${done.spawnError.code ?? done.spawnError.message}`, true);
  const stderr = done.stderr.toString();
  if (done.cancelled) return failure(`cancelled while resolving image ${image}`, true);
  if (done.code !== 0 && NOT_PRESENT.test(stderr)) return { result: 'absent', failure: notPresent(image, runtime) };
  if (done.code !== 0)
    return failure(`${runtime} image inspect ${image} failed (exit ${String(done.code)})${runtimeError(stderr) ? `: ${runtimeError(stderr)}` : ''}`, true);
  const first = parseInspect(done.stdout.toString());
  return first ?? failure(`${runtime} image inspect ${image} printed no image`, true);
}

/** The failure of an image that is not on this machine (NYL-IMAGE-UNRESOLVED): what to do about it. */
export function notPresent(image: string, runtime: Runtime): Failure {
  const reason =
    `image ${image} is not present locally, and Nyl never pulls one\n` +
    `make it present on this machine first: \`${runtime} pull ${image}\`, or \`${runtime} load\` an archive of it; then reconcile again`;
  return { ...failure(reason, true), code: 'NYL-IMAGE-UNRESOLVED' };
}

function parseInspect(text: string): Inspected | undefined {
  let rows: unknown;
  try {
    rows = JSON.parse(text);
  } catch {
    return undefined;
  }
  const row = Array.isArray(rows) ? (rows[0] as Record<string, unknown> | undefined) : undefined;
  if (!row || typeof row.Id !== 'string') return undefined;
  return {
    // Docker's ids carry the algorithm, podman's do not.
    id: row.Id.replace(/^sha256:/, ''),
    digest: typeof row.Digest === 'string' && row.Digest !== '' ? row.Digest : undefined,
    repoDigests: Array.isArray(row.RepoDigests) ? row.RepoDigests.filter((d): d is string => typeof d === 'string') : [],
  };
}

/** The repository a reference names: without its tag (a `:` after the last `/`) or digest. */
function repositoryOf(reference: string): string {
  const at = reference.indexOf('@');
  const name = at >= 0 ? reference.slice(0, at) : reference;
  const colon = name.lastIndexOf(':');
  return colon > name.lastIndexOf('/') ? name.slice(0, colon) : name;
}

/** The repo digest for the reference's repository, the image's own manifest digest first. */
function repoDigestOf(reference: string, image: Inspected): string | undefined {
  const repository = repositoryOf(reference);
  const same = image.repoDigests.filter((d) => {
    const repo = d.slice(0, d.indexOf('@'));
    return repo === repository || repo.endsWith(`/${repository}`);
  });
  return same.find((d) => image.digest !== undefined && d.endsWith(`@${image.digest}`)) ?? same.find((d) => DIGEST_REFERENCE.test(d));
}
