#!/usr/bin/env bash
# Makes what the e2e node (test/e2e/node) needs beyond test/e2e/setup.sh, and prints it as
# `export NAME=value` lines on stdout (progress goes to stderr):
#   containerd, runc, the CNI plugins, iptables, iproute2  from Debian (installed when missing)
#   NODE_BIN   kubelet, kube-controller-manager, kube-scheduler, kube-proxy and kubectl built from
#              k8s.io/kubernetes (test/e2e/go-node/go.mod pins the release test/e2e/go builds
#              kube-apiserver from), CGO_ENABLED=0 as the release builds them, with the release's
#              version stamped in (the scheduler and controller manager refuse to run as v0.0.0),
#              stripped, at nice 15 (the machine's two cores are shared); and the pods' pause
#              program. Cached under $METALSYNTH_E2E_CACHE (default ~/.cache/metalsynth-e2e), keyed by
#              the module's files and this script: about 20 minutes of CPU the first time on a
#              machine, under a minute when test/e2e/go's kube-apiserver build left the Go cache warm.
#   CONTAINERS_CONF, NODE_STANDINS, NODE_STANDIN_*  the stand-in images (test/image/standins/build.sh)
# `setup.sh binaries` makes only what needs no container store (the packages and NODE_BIN): CI
# builds it in the background while other tiers use podman. The build holds a lock in the cache, so
# a second run at once waits for it instead of building again.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
module=$(cd "$here/../go-node" && pwd)
cache=${METALSYNTH_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/metalsynth-e2e}

missing=()
command -v containerd >/dev/null 2>&1 && command -v ctr >/dev/null 2>&1 || missing+=(containerd)
command -v runc >/dev/null 2>&1 || missing+=(runc)
[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/portmap ] ||
  missing+=(containernetworking-plugins)
command -v iptables >/dev/null 2>&1 || missing+=(iptables)
command -v ip >/dev/null 2>&1 && command -v nsenter >/dev/null 2>&1 || missing+=(iproute2 util-linux)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v ssh >/dev/null 2>&1 && command -v ssh-keygen >/dev/null 2>&1 || missing+=(openssh-client)
if [ ${#missing[@]} -gt 0 ]; then
  echo "node setup: installing ${missing[*]}" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
  # Debian's containerd package starts the system's containerd where an init system runs it; the
  # node runs a containerd of its own, on sockets of its own.
  (systemctl stop containerd || service containerd stop || true) >/dev/null 2>&1
fi

commands=(kubelet kube-controller-manager kube-scheduler kube-proxy kubectl)
key=$( (cd "$module" && cat go.mod go.sum pause/*.go "$here/setup.sh") | sha256sum | cut -c1-16)
bin=$cache/node-$key
complete() {
  for command in "${commands[@]}" pause; do [ -x "$bin/$command" ] || return 1; done
}
build() {
  complete && return
  echo "node setup: building ${commands[*]} and pause into $bin (first run on this machine: minutes)" >&2
  version=$(cd "$module" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
  minor=${version#v1.}
  minor=${minor%%.*}
  # hack/lib/version.sh's stamps, for both places a component reads its version from.
  flags="-s -w"
  for package in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $package.gitVersion=$version -X $package.gitMajor=1 -X $package.gitMinor=$minor"
    flags+=" -X $package.gitTreeState=clean"
  done
  rm -rf "$bin.tmp" && mkdir -p "$bin.tmp"
  (cd "$module" && CGO_ENABLED=0 nice -n 15 go build -ldflags "$flags" -o "$bin.tmp/" \
    "${commands[@]/#/k8s.io/kubernetes/cmd/}" >&2 &&
    CGO_ENABLED=0 nice -n 15 go build -ldflags "-s -w" -o "$bin.tmp/pause" ./pause >&2)
  rm -rf "$bin" && mv "$bin.tmp" "$bin"
  find "$cache" -maxdepth 1 -name 'node-*' ! -name "node-$key" -exec rm -rf {} +
}
mkdir -p "$cache"
(
  flock 9
  build
) 9>"$cache/.node.lock"

echo "export NODE_BIN=$bin"
[ "${1:-}" = binaries ] && exit 0
bash "$here/../../image/standins/build.sh" "$bin"
