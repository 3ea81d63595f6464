#!/usr/bin/env bash
# Reconciles the example project examples/shop against a state repository on this machine.
#
#   bash examples/quickstart.sh          # run it, then remove the temporary directory
#   bash examples/quickstart.sh --keep   # keep the directory to explore the project and its state
#
# It builds nothing: run `npm ci` first (its prepare script builds dist/). It works from any
# directory, needs only git and node, touches nothing outside a fresh temporary directory, and
# stops at the first command that fails.
set -euo pipefail

keep=false
for arg in "$@"; do
  case "$arg" in
    --keep) keep=true ;;
    -h | --help)
      sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "quickstart.sh: unknown argument: $arg (see --help)" >&2
      exit 2
      ;;
  esac
done

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
nyl="$root/bin/nyl"
if [ ! -f "$root/dist/cli/main.js" ]; then
  echo "quickstart.sh: $root/dist is missing; run \`npm ci\` (or \`npm run build\`) in $root first" >&2
  exit 1
fi

# A caller's Git environment (such as inside a Git hook) must not leak into the temporary repository.
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL

work="$(mktemp -d "${TMPDIR:-/tmp}/nyl-quickstart.XXXXXX")"
if [ "$keep" = false ]; then
  trap 'rm -rf "$work"' EXIT
fi
project="$work/shop"
state="$work/state.git"
# Keep Nyl's cache (parse caches and mirrors of remote state) inside the temporary directory too.
export NYL_CACHE_DIR="$work/cache"

if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() {
  printf '\n%s==> %s%s\n' "$bold" "$*" "$plain"
}

run() {
  step "$*"
  "$@"
}

step "copy examples/shop to $project and commit it"
cp -R "$here/shop" "$project"
# Point the Environment's state at a bare repository next to the project. state init creates it.
sed "s|STATE_REPO_URL|file://$state|" "$here/shop/nyl.yaml" >"$project/nyl.yaml"
cd "$project"
git init --quiet -b main
# Nyl authors state commits as Git's user.name and user.email of the project's repository.
git config user.name "Nyl Quickstart"
git config user.email "quickstart@example.com"
git add --all
git -c user.name="Nyl Quickstart" -c user.email="quickstart@example.com" -c commit.gpgsign=false \
  commit --quiet -m "shop: network, database, cache, migrate and smoke-test"
git log --oneline

nylrun() {
  step "nyl $*"
  "$nyl" "$@"
}

nylrun state init -e dev
nylrun reconcile -e dev
# Nothing changed in source, so every receipt is current: no lease, no commit.
nylrun reconcile -e dev
nylrun status -e dev

run git --git-dir "$state" log --oneline --all

if [ "$keep" = true ]; then
  cat <<EOF

The project and its state are kept in $work. Try:
  cd $project
  git log -p nyl/dev/desired          # what Nyl decided, one commit per operation
  git log -p nyl/dev/observed         # what Nyl observed: receipts and outputs
  $nyl status -e dev -o json
  $nyl ui    # then open http://127.0.0.1:4780/ (a read-only web view; Ctrl-C stops it)
EOF
else
  printf '\nDone. Run with --keep to explore the project and its state repository afterwards.\n'
fi
