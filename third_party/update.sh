#!/usr/bin/env bash
# Replaces the copy of a dependency in third_party (bluemonday, gorilla-css,
# goldmark, glamour or clipboard) with release VERSION from the module cache,
# its sources without tests or test data, and re-applies NAME.patch, the
# change that moves its start-up work (compiling regular expressions,
# looking for clipboard programs) to first use. chroma has its own script,
# update-chroma.sh.
# Usage: third_party/update.sh goldmark v1.7.13; then build, run
# `make test`, and update the version in README.md's dependency list.
set -euo pipefail
name=${1:?usage: $0 NAME VERSION (NAME: bluemonday, gorilla-css, goldmark, glamour or clipboard)}
version=${2:?usage: $0 NAME VERSION}
case $name in
bluemonday) module=github.com/microcosm-cc/bluemonday ;;
gorilla-css) module=github.com/gorilla/css ;;
goldmark) module=github.com/yuin/goldmark ;;
glamour) module=github.com/charmbracelet/glamour ;;
clipboard) module=github.com/atotto/clipboard ;;
*) echo "$name: not a copy this script keeps (bluemonday, gorilla-css, goldmark, glamour or clipboard)" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
dest=$here/$name
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && go mod init tmp >/dev/null 2>&1 && go mod download -json "$module@$version" >info.json)
src=$(sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' "$tmp/info.json")
[ -d "$src" ] || { echo "could not download $module $version" >&2; exit 1; }
rm -rf "$dest"
mkdir -p "$dest"
# goldmark/testutil stays although only tests use it: go mod tidy follows
# the tests of jarvis's dependencies (goldmark-emoji's import it).
(cd "$src" && find . -type f \( \( -name '*.go' ! -name '*_test.go' \) -o -name 'LICENSE*' -o -name README.md -o -name go.mod \) \
	! -path './_*' ! -path '*/_test/*' ! -path '*/testdata/*' ! -path './cmd/*' ! -path './fuzz/*' \
	! -path './internal/generate-style-json/*' ! -path './styles/examples/*' ! -path './styles/gallery/*') |
	while read -r f; do mkdir -p "$dest/$(dirname "$f")"; cp "$src/$f" "$dest/$f"; done
chmod -R u+w "$dest"
# The copies are gofmt-formatted like the rest of the tree (goldmark's
# generated tables are not, upstream); the patches apply to that.
gofmt -w "$dest"
(cd "$here/.." && git apply "third_party/$name.patch") || {
	echo "$name.patch does not apply to $version: apply it by hand, then regenerate it with git diff" >&2; exit 1; }
(cd "$here/.." && go mod edit -require "$module@$version" && go mod tidy)
echo "$module $version is in third_party/$name with the patch applied"
