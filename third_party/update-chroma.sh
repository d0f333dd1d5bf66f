#!/usr/bin/env bash
# Replaces third_party/chroma with chroma VERSION from the module cache
# (its sources without tests, test data or tools), re-applies
# chroma.patch, the change that makes its registries load on first use,
# and regenerates the lexer index that change adds (lexers/index.go).
# Usage: third_party/update-chroma.sh v2.20.0; then build, run
# `make test`, and update chroma's version in README.md's dependency list.
set -euo pipefail
version=${1:?usage: $0 VERSION (for example v2.20.0)}
here=$(cd "$(dirname "$0")" && pwd)
dest=$here/chroma
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && go mod init tmp >/dev/null 2>&1 && go mod download -json "github.com/alecthomas/chroma/v2@$version" >info.json)
src=$(sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' "$tmp/info.json")
[ -d "$src" ] || { echo "could not download chroma $version" >&2; exit 1; }
keep_tests=$(mktemp -d)
cp "$dest/lexers/lazy_test.go" "$keep_tests/lexers_lazy_test.go"
cp "$dest/lexers/index_test.go" "$keep_tests/lexers_index_test.go"
cp "$dest/styles/lazy_test.go" "$keep_tests/styles_lazy_test.go"
rm -rf "$dest"
mkdir -p "$dest"
(cd "$src" && find . -type f -name '*.go' ! -name '*_test.go' ! -path './cmd/*' ! -path './_tools/*' ! -path './lexers/testdata/*'
 cd "$src" && find . -type f \( -name '*.xml' -o -name COPYING -o -name README.md \) ! -path './lexers/testdata/*' ! -path './cmd/*' ! -path './_tools/*') |
	while read -r f; do mkdir -p "$dest/$(dirname "$f")"; cp "$src/$f" "$dest/$f"; done
chmod -R u+w "$dest"
cp "$keep_tests/lexers_lazy_test.go" "$dest/lexers/lazy_test.go"
cp "$keep_tests/lexers_index_test.go" "$dest/lexers/index_test.go"
cp "$keep_tests/styles_lazy_test.go" "$dest/styles/lazy_test.go"
rm -rf "$keep_tests"
# The copy's go.mod keeps only what its sources import: its own tests'
# dependencies went with the tests.
regexp2=$(sed -n 's/^\tgithub.com\/dlclark\/regexp2 \(v[^ ]*\)$/\1/p' "$src/go.mod")
goversion=$(sed -n 's/^go //p' "$src/go.mod")
printf 'module github.com/alecthomas/chroma/v2\n\ngo %s\n\nrequire github.com/dlclark/regexp2 %s\n' "$goversion" "$regexp2" >"$dest/go.mod"
gofmt -w "$dest" # formatted like the rest of the tree; the patch applies to that
(cd "$here/.." && git apply third_party/chroma.patch) || {
	echo "chroma.patch does not apply to $version: apply it by hand, then regenerate it with git diff" >&2; exit 1; }
grep "github.com/dlclark/regexp2 $regexp2" "$here/../go.sum" >"$dest/go.sum" || true
# The lexer index is made from the lexers of the version just copied.
(cd "$dest" && UPDATE_LEXER_INDEX=1 go test -run '^TestIndexIsCurrent$' ./lexers >/dev/null)
(cd "$here/.." && go mod edit -require "github.com/alecthomas/chroma/v2@$version" && go mod tidy)
echo "chroma $version is in third_party/chroma with the patch applied"
