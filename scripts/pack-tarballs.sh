#!/usr/bin/env bash
# Packs every published package of the workspace into one directory (default: ./tarballs of the clone): how the
# packages are installed today, before they are on the npm registry (README "Install"). Builds first when needed.
# Usage: npm run pack:tarballs [-- <directory>]
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
out="$(mkdir -p "${1:-$repo/tarballs}" && cd "${1:-$repo/tarballs}" && pwd)"
pnpm_spec=$(node -p "require('$repo/package.json').packageManager")
node "$repo/scripts/bootstrap.mjs"
rm -f "$out"/turnjournal-*.tgz
for dir in "$repo"/packages/*/; do
  if [ "$(node -p "require('${dir}package.json').private === true")" = true ]; then continue; fi
  (cd "$dir" && npx --yes "$pnpm_spec" pack --pack-destination "$out" >/dev/null)
done
for tarball in "$out"/*.tgz; do
  printf '  %-48s %8s bytes, %4s files\n' "$(basename "$tarball")" "$(stat -c %s "$tarball")" "$(tar tzf "$tarball" | wc -l)"
done
echo "packed into $out: install them all at once (they depend on each other): npm install $out/*.tgz"
