#!/usr/bin/env bash
# `make images`: builds the operator and trainer images from deploy/Dockerfile.operator and
# deploy/Dockerfile.trainer with buildah (no daemon, no registry) and writes docker archives to
# build/images/, one line per image with its size.
#
# The Dockerfiles are exactly what a Docker user builds. Only their base, debian:bookworm-slim,
# comes from here: a minbase Debian 12 made by mmdebstrap from this machine's apt sources,
# cached as a tarball keyed by what makes it (suite, variant, mmdebstrap version), and committed
# to buildah's local storage under the name the Dockerfiles ask for. Builds never pull.
#
# The TensorFlow example's image (examples/tensorflow/Dockerfile) installs tensorflow-cpu from a
# wheelhouse that `pip download` fills here on the host (cached by the requirements' hash), so
# nothing inside the build reaches PyPI.
#
#   scripts/images.sh [IMAGE...]      IMAGE: operator, trainer, tensorflow (default: all three)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${DISTTRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/disttrain}/images
out="$root/build/images"
version=$(sed -n 's/^project(disttrain VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
log() { echo "images: $*" >&2; }

if [[ $(id -u) -ne 0 ]]; then
  log "buildah and mmdebstrap need root here (rootless buildah needs subuid ranges this machine lacks)"
  exit 1
fi
for tool in buildah mmdebstrap; do
  command -v "$tool" >/dev/null || { log "$tool is missing: run make deps"; exit 1; }
done
mkdir -p "$cache" "$out"

# The base image the Dockerfiles name, made locally once per key.
base_name=docker.io/library/debian:bookworm-slim
key=$(printf '%s\n' bookworm minbase "$(mmdebstrap --version)" | sha256sum | cut -c1-16)
if [[ $(buildah inspect --type image --format '{{index .ImageAnnotations "io.disttrain.base-key"}}' \
        "$base_name" 2>/dev/null) != "$key" ]]; then
  tarball="$cache/base-bookworm-minbase-$key.tar"
  if [[ ! -f $tarball ]]; then
    log "making the Debian 12 base with mmdebstrap (once; 1-2 min)"
    partial="${tarball%.tar}.partial.tar"  # mmdebstrap picks its output format by the extension
    mmdebstrap --quiet --variant=minbase bookworm "$partial" >"$cache/mmdebstrap.log" 2>&1 || {
      log "mmdebstrap failed; last lines of $cache/mmdebstrap.log:"; tail -n 20 "$cache/mmdebstrap.log" >&2; exit 1; }
    mv "$partial" "$tarball"
  fi
  ctr=$(buildah from scratch)
  buildah add --quiet "$ctr" "$tarball" / >/dev/null
  buildah config --cmd /bin/bash --annotation "io.disttrain.base-key=$key" "$ctr"
  buildah commit --quiet --rm "$ctr" "$base_name" >/dev/null
  log "base image $base_name ready (key $key)"
fi

# tensorflow_wheelhouse: examples/tensorflow/wheelhouse holds the example's wheels.
tensorflow_wheelhouse() {
  local req="$root/examples/tensorflow/requirements.txt" dest="$root/examples/tensorflow/wheelhouse"
  local wheels="$cache/wheelhouse-$(sha256sum "$req" | cut -c1-16)"
  if [[ ! -f $wheels/.complete ]]; then
    log "downloading the TensorFlow example's wheels into $wheels (once)"
    rm -rf "$wheels"
    python3 -m pip download --quiet --disable-pip-version-check --only-binary=:all: --dest "$wheels" -r "$req" ||
      { log "pip download failed"; exit 1; }
    touch "$wheels/.complete"
  fi
  rm -rf "$dest"
  cp -al "$wheels" "$dest" 2>/dev/null || cp -a "$wheels" "$dest"
}

images=("$@")
((${#images[@]})) || images=(operator trainer tensorflow)
for image in "${images[@]}"; do
  context=$root
  dockerfile="$root/deploy/Dockerfile.$image"
  name="ghcr.io/disttrain/$image:$version"
  if [[ $image == tensorflow ]]; then
    context="$root/examples/tensorflow"
    dockerfile="$context/Dockerfile"
    name="ghcr.io/disttrain/tf-example:$version"
    tensorflow_wheelhouse
  fi
  [[ -f $dockerfile ]] || { log "no $dockerfile"; exit 1; }
  start=$SECONDS
  log "building $name from ${dockerfile#"$root/"}"
  if ! buildah bud --quiet --pull=never --isolation=chroot --layers -f "$dockerfile" -t "$name" "$context" \
      >"$out/$image.build.log" 2>&1; then
    log "building $image failed; last lines of $out/$image.build.log:"
    tail -n 30 "$out/$image.build.log" >&2
    exit 1
  fi
  # The archive is rewritten only when the image changed, so the real node re-imports (seconds
  # for the 2.5 GB TensorFlow image) only what is new.
  id=$(buildah inspect --type image --format '{{.FromImageID}}' "$name")
  if [[ ! -f $out/$image.tar || $(cat "$out/$image.id" 2>/dev/null) != "$id" ]]; then
    rm -f "$out/$image.tar"
    buildah push --quiet "$name" "docker-archive:$out/$image.tar:$name" >/dev/null
    echo "$id" >"$out/$image.id"
  fi
  printf 'image %-8s %s  %s MB archive, built in %d s\n' "$image" "$name" \
    "$(( $(stat -c %s "$out/$image.tar") / 1000000 ))" "$((SECONDS - start))"
done
