#!/usr/bin/env bash
# Installs a latgen release for the action (action.yml): the prebuilt binary for the
# runner, checked against the checksum published beside it, put on PATH for the next steps.
#
# Reads: LATGEN_VERSION (v0.1.0 or 0.1.0), LATGEN_REPO (owner/name on GitHub),
# LATGEN_RELEASES_URL (optional: a mirror of the releases' download folder, https:// or
# file://), and the runner's RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP and GITHUB_PATH.
set -euo pipefail

fail() {
  echo "::error title=latgen::$1"
  exit 2
}

version="${LATGEN_VERSION:?set the version input}"
version="v${version#v}"
# The version goes into a URL and a folder name: nothing but a release tag is taken.
if ! [[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]]; then
  fail "version '$LATGEN_VERSION' is not a release tag such as v0.1.0"
fi
repo="${LATGEN_REPO:?set the repository input}"
if ! [[ "$repo" =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]]; then
  fail "repository '$repo' is not owner/name"
fi
releases="${LATGEN_RELEASES_URL:-https://github.com/$repo/releases/download}"
case "$releases" in
  https://* | file://*) ;;
  *) fail "releases-url '$releases' is neither https:// nor file://" ;;
esac

case "${RUNNER_OS:-}-${RUNNER_ARCH:-}" in
  Linux-X64) target=x86_64-unknown-linux-musl ;;
  Linux-ARM64) target=aarch64-unknown-linux-musl ;;
  macOS-X64) target=x86_64-apple-darwin ;;
  macOS-ARM64) target=aarch64-apple-darwin ;;
  *) fail "latgen publishes no binary for ${RUNNER_OS:-?} ${RUNNER_ARCH:-?} runners" ;;
esac

archive="latgen-$target.tar.gz"
url="$releases/$version/$archive"
dir="${RUNNER_TEMP:?}/latgen-$version"
rm -rf "$dir"
mkdir -p "$dir/download"
get() {
  curl --proto '=https,file' --tlsv1.2 -fsSL --retry 3 -o "$1" "$2" ||
    fail "could not download $2"
}
echo "Downloading $url"
get "$dir/download/$archive" "$url"
get "$dir/download/$archive.sha256" "$url.sha256"
if command -v sha256sum >/dev/null 2>&1; then
  check=(sha256sum -c)
else
  check=(shasum -a 256 -c)
fi
(cd "$dir/download" && "${check[@]}" "$archive.sha256") ||
  fail "$archive does not match its published checksum: not installing it"
tar -xzf "$dir/download/$archive" -C "$dir" latgen
rm -rf "$dir/download"
"$dir/latgen" --version
echo "$dir" >> "${GITHUB_PATH:?}"
