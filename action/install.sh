#!/usr/bin/env bash
# Installs a latgen release for the action (action.yml): the prebuilt binary for the
# runner, checked against the checksum published beside it, put on PATH for the next steps.
#
# The checksum published beside the archive proves it arrived whole, not who made it: a
# workflow that wants the latter pins the archive's hash (LATGEN_SHA256, the action's
# sha256 input), which then must match too.
#
# Reads: LATGEN_VERSION (v0.1.0 or 0.1.0), LATGEN_REPO (owner/name on GitHub),
# LATGEN_RELEASES_URL (optional: a mirror of the releases' download folder, https:// or
# file://), LATGEN_SHA256 (optional), and the runner's RUNNER_OS, RUNNER_ARCH,
# RUNNER_TEMP and GITHUB_PATH.
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
  sum=(sha256sum)
else
  sum=(shasum -a 256)
fi
# The archive's own hash against the first field of the checksum file (whatever name that
# file gives), and against the pinned one when there is one.
actual=$("${sum[@]}" "$dir/download/$archive" | cut -d' ' -f1)
published=$(cut -d' ' -f1 "$dir/download/$archive.sha256")
[ "$actual" = "$published" ] ||
  fail "$archive does not match its published checksum: not installing it"
pinned="${LATGEN_SHA256:-}"
if [ -n "$pinned" ] && [ "$actual" != "$pinned" ]; then
  fail "$archive is not the one pinned by the sha256 input ($pinned): not installing it"
fi
tar -xzf "$dir/download/$archive" -C "$dir" latgen
rm -rf "$dir/download"
"$dir/latgen" --version
echo "$dir" >> "${GITHUB_PATH:?}"
