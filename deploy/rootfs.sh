#!/bin/sh
# Used by the Dockerfiles' runtime stages: copies into ROOTFS each BINARY and every shared
# library it loads (its ldd closure, the dynamic loader included), then the extra PATHs (data,
# CA certificates), and makes /tmp (1777). The final stage is FROM scratch with only this tree: no
# shell, no package manager.
#   rootfs.sh ROOTFS BINARY... [-- PATH...]
set -eu
root=$1
shift
mkdir -p "$root/tmp"
chmod 1777 "$root/tmp"
copy() {  # copies $1 to the same path under $root, following symlinks
  mkdir -p "$root$(dirname "$1")"
  cp -L "$1" "$root$1"
}
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  copy "$1"
  # "libx.so => /path (addr)" or "/lib64/ld-linux-x86-64.so.2 (addr)"; a missing one fails here.
  if ldd "$1" | grep -q 'not found'; then
    echo "rootfs.sh: $1 needs a library that is not installed:" >&2
    ldd "$1" | grep 'not found' >&2
    exit 1
  fi
  for lib in $(ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
    copy "$lib"
  done
  shift
done
[ $# -gt 0 ] && shift
for path in "$@"; do
  mkdir -p "$root$(dirname "$path")"
  cp -a "$path" "$root$path"
done
