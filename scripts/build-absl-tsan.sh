#!/usr/bin/env bash
# Builds Abseil with ThreadSanitizer, from the source of the very Debian package the project uses
# (abseil 20220623.1, deb.debian.org's pool), into the cache outside the repository, and prints
# its install prefix. ThreadSanitizer sees only instrumented code: against Debian's prebuilt
# libabsl it cannot see absl::Mutex (every guarded access reads as a race), so the TSan build
# (`make sanitize`) links this copy instead.
set -euo pipefail

version=20220623.1
sha256=abfe2897f3a30edaa74bc34365afe3c2a3cd012091a97dc7e008f7016adcd5fe
cache=${DISTTRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/disttrain}
prefix="$cache/absl-tsan-$version"
if [[ -f $prefix/.done ]]; then
  echo "$prefix"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tarball="$work/abseil.tar.gz"
curl -sSfL -o "$tarball" "http://deb.debian.org/debian/pool/main/a/abseil/abseil_$version.orig.tar.gz"
echo "$sha256  $tarball" | sha256sum -c --quiet
tar -xzf "$tarball" -C "$work"
src=$(find "$work" -maxdepth 1 -type d -name 'abseil*' | head -1)
echo "build-absl-tsan: building Abseil $version with -fsanitize=thread into $prefix" >&2
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_STANDARD=20 \
  -DABSL_PROPAGATE_CXX_STD=ON -DBUILD_TESTING=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread" -DCMAKE_INSTALL_PREFIX="$prefix.tmp" >/dev/null
cmake --build "$work/build" >/dev/null
cmake --install "$work/build" >/dev/null
rm -rf "$prefix"
mv "$prefix.tmp" "$prefix"
touch "$prefix/.done"
echo "$prefix"
