// A git daemon and a smart-HTTP server over one temporary base directory, started before a test
// file's tests and stopped after them: `const remotes = networkRemotes('prefix-')`, then
// remotes.base, remotes.daemon.url(name), remotes.http.url(name).
import { after, before } from 'node:test';
import { cleanupAll, tempDir } from './git-fixtures.mjs';
import { startGitDaemon } from './git-daemon.mjs';
import { startGitHttp } from './git-http.mjs';

export function networkRemotes(prefix) {
  const remotes = { base: undefined, daemon: undefined, http: undefined };
  before(async () => {
    remotes.base = tempDir(prefix);
    remotes.daemon = await startGitDaemon(remotes.base);
    remotes.http = await startGitHttp(remotes.base);
  });
  after(async () => {
    await remotes.daemon?.stop();
    await remotes.http?.stop();
    cleanupAll();
  });
  return remotes;
}
