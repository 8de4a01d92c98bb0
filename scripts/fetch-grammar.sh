#!/usr/bin/env bash
# Fetches a tree-sitter grammar (generated parser.c and scanner.c, MIT
# licence) from the npm registry into a build folder, once, and checks
# that it is the version whose ABI the Debian runtime loads.
#
#   scripts/fetch-grammar.sh [DEST]            the Python grammar
#   scripts/fetch-grammar.sh NAME [DEST]       NAME: python, bash or toml
#
# DEST defaults to build/third_party/tree-sitter-NAME.  The grammars are
# third-party generated code: they are never committed, only fetched by
# the build.  Set SM_TS_<NAME>_TGZ (SM_TS_PYTHON_TGZ, SM_TS_BASH_TGZ,
# SM_TS_TOML_TGZ) to a local copy of the npm tarball to build without the
# network.
set -eu
NAME=python
case "${1:-}" in
  python|bash|toml) NAME=$1; shift ;;
esac
case "$NAME" in
  python) PKG=tree-sitter-python; VERSION=0.23.6 ;;
  bash)   PKG=tree-sitter-bash; VERSION=0.23.3 ;;
  toml)   PKG=@tree-sitter-grammars/tree-sitter-toml; VERSION=0.7.0 ;;
esac
ABI=14
DEST=${1:-build/third_party/tree-sitter-$NAME}
if [ -f "$DEST/VERSION" ] && [ "$(cat "$DEST/VERSION")" = "$VERSION" ] &&
   [ -f "$DEST/src/parser.c" ] && [ -f "$DEST/src/scanner.c" ]; then
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
var="SM_TS_$(echo "$NAME" | tr a-z A-Z)_TGZ"
if [ -n "${!var:-}" ]; then
  cp "${!var}" "$tmp/grammar.tgz"
else
  command -v npm >/dev/null 2>&1 || {
    echo "fetch-grammar: npm is needed to fetch $PKG@$VERSION" \
         "(run scripts/deps.sh)" >&2; exit 1; }
  (cd "$tmp" && npm pack --silent "$PKG@$VERSION" >/dev/null)
  mv "$tmp"/*.tgz "$tmp/grammar.tgz"
fi
tar -xzf "$tmp/grammar.tgz" -C "$tmp" package/package.json package/LICENSE \
  package/src/parser.c package/src/scanner.c package/src/tree_sitter
got=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$tmp/package/package.json" | head -1)
[ "$got" = "$VERSION" ] || {
  echo "fetch-grammar: expected $PKG $VERSION, got '$got'" >&2; exit 1; }
grep -q "^#define LANGUAGE_VERSION $ABI\$" "$tmp/package/src/parser.c" || {
  echo "fetch-grammar: $PKG parser.c is not ABI $ABI (the Debian runtime's)" >&2; exit 1; }
rm -rf "$DEST"
mkdir -p "$DEST"
cp -r "$tmp/package/src" "$tmp/package/LICENSE" "$DEST/"
echo "$VERSION" >"$DEST/VERSION"
echo "fetch-grammar: $PKG $VERSION (ABI $ABI) in $DEST"
