// Test images for the OciImage driver, built offline: a root file system holding Debian's
// busybox-static (/bin/busybox and a symlink per applet the tests use, /tmp, an /etc/passwd with
// nobody) as a tarball, imported with `podman import` as TEST_IMAGE (running as root) and
// TEST_IMAGE_NOBODY (as nobody). Nothing is pulled.
//
// ensureTestImage() builds them once per machine: when they exist already it only checks that
// (one `podman image exists` each, ~50 ms), and concurrent callers in one process share the build.
// podmanAvailable() says whether podman can run a container here at all, with the flags the
// driver passes, so that a test file skips with the reason when it cannot:
//
//   const podman = await podmanAvailable();
//   test('...', { skip: podman.ok ? false : podman.reason }, async () => { ... });

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const TEST_IMAGE = 'localhost/nyl-test-busybox:1';
/** The same file system, run as nobody (uid 65534) by default: for what a non-root container may write. */
export const TEST_IMAGE_NOBODY = 'localhost/nyl-test-busybox:1-nobody';

const APPLETS = ['sh', 'cat', 'echo', 'printf', 'sleep', 'true', 'false', 'env', 'ls', 'id', 'rm', 'mkdir', 'head', 'od', 'wc', 'test'];
/** What the driver passes to every run (src/drivers/oci-image/index.ts): the smoke test uses the same. */
const RUN_FLAGS = ['--rm', '--pull=never', '--network=none', '--runtime', 'runc', '--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=4096:4096'];

/** Runs a command; resolves { code, stdout, stderr } (code null when it could not start). */
export function sh(argv, { timeout = 120_000 } = {}) {
  return new Promise((resolve) => {
    execFile(argv[0], argv.slice(1), { timeout, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ code, stdout, stderr: stderr || (error && code === null ? String(error.message) : '') });
    });
  });
}

function busyboxPath() {
  return ['/bin/busybox', '/usr/bin/busybox'].find((p) => fs.existsSync(p));
}

/** The root file system as a tarball, reproducible (sorted, owned by root, mtime 0). */
async function rootfsTarball(dir) {
  const root = path.join(dir, 'rootfs');
  for (const d of ['bin', 'tmp', 'etc', 'nyl']) fs.mkdirSync(path.join(root, d), { recursive: true });
  fs.chmodSync(path.join(root, 'tmp'), 0o1777);
  fs.copyFileSync(busyboxPath(), path.join(root, 'bin', 'busybox'));
  fs.chmodSync(path.join(root, 'bin', 'busybox'), 0o755);
  for (const applet of APPLETS) fs.symlinkSync('busybox', path.join(root, 'bin', applet));
  fs.writeFileSync(path.join(root, 'etc', 'passwd'), 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n');
  fs.writeFileSync(path.join(root, 'etc', 'group'), 'root:x:0:\nnogroup:x:65534:\n');
  const tarball = path.join(dir, 'rootfs.tar');
  const tar = await sh(['tar', '--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner', '-C', root, '-cf', tarball, '.']);
  if (tar.code !== 0) throw new Error(`tar failed: ${tar.stderr}`);
  return tarball;
}

const IMAGES = [
  { name: TEST_IMAGE, changes: ['CMD ["/bin/true"]'] },
  { name: TEST_IMAGE_NOBODY, changes: ['CMD ["/bin/true"]', 'USER 65534'] },
];

async function exists(image) {
  return (await sh(['podman', 'image', 'exists', image])).code === 0;
}

async function build() {
  const missing = [];
  for (const image of IMAGES) if (!(await exists(image.name))) missing.push(image);
  if (missing.length === 0) return TEST_IMAGE;
  if (!busyboxPath()) throw new Error('no /bin/busybox: install busybox-static (apt-get install busybox-static)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nyl-oci-image-'));
  try {
    const tarball = await rootfsTarball(dir);
    for (const image of missing) {
      const imported = await sh(['podman', 'import', ...image.changes.flatMap((c) => ['--change', c]), tarball, image.name]);
      if (imported.code !== 0) throw new Error(`podman import failed: ${imported.stderr.trim()}`);
    }
    return TEST_IMAGE;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

let building;
/** TEST_IMAGE (and TEST_IMAGE_NOBODY), built when missing; rejects with why they cannot be built. */
export function ensureTestImage() {
  building ??= build();
  return building;
}

let available;
/** { ok: true } when podman runs TEST_IMAGE here with the driver's flags; else { ok: false, reason }. */
export function podmanAvailable() {
  available ??= (async () => {
    const version = await sh(['podman', '--version']);
    if (version.code !== 0)
      return { ok: false, reason: `podman is not usable here (${version.stderr.trim() || 'not on PATH'}): install podman, runc and busybox-static` };
    try {
      await ensureTestImage();
    } catch (error) {
      return { ok: false, reason: `the test image cannot be built: ${error.message}` };
    }
    const run = await sh(['podman', 'run', ...RUN_FLAGS, TEST_IMAGE, '/bin/true']);
    if (run.code !== 0) return { ok: false, reason: `podman cannot run a container here: ${run.stderr.trim().split('\n').pop()}` };
    return { ok: true };
  })();
  return available;
}
