#!/usr/bin/env bash
# Fetches the tree-sitter Python grammar (generated parser.c and scanner.c,
# MIT licence) from the npm registry into a build folder, once, and checks
# that it is the version whose ABI the Debian runtime loads.
#
#   scripts/fetch-grammar.sh [DEST]   (default: build/third_party/tree-sitter-python)
#
# The grammar is third-party generated code: it is never committed, only
# fetched by the build.  Set SM_TS_PYTHON_TGZ to a local copy of the npm
# tarball to build without the network.
set -eu
VERSION=0.23.6
ABI=14
DEST=${1:-build/third_party/tree-sitter-python}
if [ -f "$DEST/VERSION" ] && [ "$(cat "$DEST/VERSION")" = "$VERSION" ] &&
   [ -f "$DEST/src/parser.c" ] && [ -f "$DEST/src/scanner.c" ]; then
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${SM_TS_PYTHON_TGZ:-}" ]; then
  cp "$SM_TS_PYTHON_TGZ" "$tmp/grammar.tgz"
else
  command -v npm >/dev/null 2>&1 || {
    echo "fetch-grammar: npm is needed to fetch tree-sitter-python@$VERSION" \
         "(run scripts/deps.sh)" >&2; exit 1; }
  (cd "$tmp" && npm pack --silent "tree-sitter-python@$VERSION" >/dev/null)
  mv "$tmp"/tree-sitter-python-*.tgz "$tmp/grammar.tgz"
fi
tar -xzf "$tmp/grammar.tgz" -C "$tmp" package/package.json package/LICENSE \
  package/src/parser.c package/src/scanner.c package/src/tree_sitter
got=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$tmp/package/package.json" | head -1)
[ "$got" = "$VERSION" ] || {
  echo "fetch-grammar: expected tree-sitter-python $VERSION, got '$got'" >&2; exit 1; }
grep -q "^#define LANGUAGE_VERSION $ABI\$" "$tmp/package/src/parser.c" || {
  echo "fetch-grammar: parser.c is not ABI $ABI (the Debian runtime's)" >&2; exit 1; }
rm -rf "$DEST"
mkdir -p "$DEST"
cp -r "$tmp/package/src" "$tmp/package/LICENSE" "$DEST/"
echo "$VERSION" >"$DEST/VERSION"
echo "fetch-grammar: tree-sitter-python $VERSION (ABI $ABI) in $DEST"
