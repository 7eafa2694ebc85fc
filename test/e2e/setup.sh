#!/usr/bin/env bash
# Makes what the e2e suite needs and prints the directory that holds it:
#   etcd            from Debian's etcd-server package (installed when missing)
#   kube-apiserver  built from k8s.io/kubernetes (test/e2e/go/go.mod pins the release), CGO_ENABLED=0
#   flux-apply      test/e2e/go/flux-apply: applies objects as Flux's kustomize-controller does
#   helm            built from helm.sh/helm/v3 (test/e2e/go-helm/go.mod pins the release), for the
#                   Helm chart's tests; a module of its own, cached under a key of its own, linked
#                   into the directory printed
#   argo-sync       test/e2e/go-argo/argo-sync: one Argo CD Application's sync with Argo CD's own sync
#                   engine (gitops-engine); a module of its own (Argo CD's k8s.io release), cached and
#                   linked the same way
#   dex             built from github.com/dexidp/dex (test/e2e/go-dex/go.mod pins v2.45.1), the OIDC
#                   provider a SIPCluster's auth service renders (issue #39); a module of its own,
#                   cached and linked the same way. `setup.sh dex` builds (or finds) only it and prints
#                   its path: the trust-boundary fuzz runs it as a judge
# The Go binaries are cached under $METALSYNTH_E2E_CACHE (default ~/.cache/metalsynth-e2e), keyed by
# the Go module files and sources, so only the first run on a machine pays for the build (~5 min).
# Each build holds a lock of its own, so two runs at once (CI builds in the background while the slow
# tier asks for dex) build each binary once and the second waits for it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${METALSYNTH_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/metalsynth-e2e}
mkdir -p "$cache"
# locked NAME COMMAND...: runs COMMAND holding the lock NAME in the cache.
locked() {
  local name=$1
  shift
  (
    flock 9
    "$@"
  ) 9>"$cache/.$name.lock"
}

# --- dex (issue #39) ---
# Built at nice 15 (the machine's two cores are shared), without cgo: the rendered config uses memory
# storage, so the sqlite3 driver cgo would bring is not needed. About 2 minutes of CPU the first time.
dex_key=$(cd "$here/go-dex" && cat go.mod go.sum tools.go | sha256sum | cut -c1-16)
dex_dir="$cache/dex-$dex_key"
build_dex() {
  if [ ! -x "$dex_dir/dex" ]; then
    echo "e2e setup: building dex into $dex_dir (first run on this machine: a few minutes)" >&2
    mkdir -p "$dex_dir.tmp"
    (cd "$here/go-dex" && CGO_ENABLED=0 nice -n 15 go build -ldflags "-X main.version=v2.45.1" \
      -o "$dex_dir.tmp/dex" github.com/dexidp/dex/cmd/dex >&2)
    rm -rf "$dex_dir" && mv "$dex_dir.tmp" "$dex_dir"
  fi
}
if [ "${1:-}" = dex ]; then
  locked dex build_dex
  echo "$dex_dir/dex"
  exit 0
fi
# --- end dex ---

if ! command -v etcd >/dev/null 2>&1; then
  echo "e2e setup: installing etcd-server" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >&2
  # The package starts a system etcd on the default ports; the tests run their own.
  (systemctl stop etcd || service etcd stop || true) >/dev/null 2>&1
fi

# Linked as Kubernetes links a release, so that /version says which (a chart's kubeVersion is
# checked against it) rather than the source's v0.0.0-master.
kube_version=$(sed -n 's/^\tk8s.io\/kubernetes \(v[0-9.]*\).*/\1/p' "$here/go/go.mod")
kube_minor=$(echo "$kube_version" | cut -d. -f2)
kube_ldflags="-X k8s.io/component-base/version.gitVersion=$kube_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$kube_minor -X k8s.io/component-base/version.gitTreeState=clean"
key=$( (cd "$here/go" && cat go.mod go.sum flux-apply/*.go && echo "$kube_ldflags") | sha256sum | cut -c1-16)
bin="$cache/$key"
build_apiserver() {
  if [ ! -x "$bin/kube-apiserver" ] || [ ! -x "$bin/flux-apply" ]; then
    echo "e2e setup: building kube-apiserver and flux-apply into $bin (first run on this machine: a few minutes)" >&2
    mkdir -p "$bin.tmp"
    (cd "$here/go" && CGO_ENABLED=0 go build -ldflags "$kube_ldflags" -o "$bin.tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver >&2 &&
      CGO_ENABLED=0 go build -o "$bin.tmp/flux-apply" ./flux-apply >&2)
    rm -rf "$bin" && mv "$bin.tmp" "$bin"
  fi
}
locked apiserver build_apiserver

# --- helm (issue #24) ---
# Built at nice 15: the machine's two cores are shared. About 4 minutes of CPU the first time.
# Linked as helm's Makefile links a release: the Kubernetes version `helm template` and `helm lint`
# assume without a cluster is client-go's (v0.N.x is 1.N), not the source's 1.20, which a chart's
# kubeVersion would refuse.
helm_version=$(sed -n 's/^require helm.sh\/helm\/v3 \(v[0-9.]*\)$/\1/p' "$here/go-helm/go.mod")
k8s_minor=$(sed -n 's/^\tk8s.io\/client-go v0\.\([0-9]*\)\..*/\1/p' "$here/go-helm/go.mod")
helm_ldflags="-X helm.sh/helm/v3/internal/version.version=$helm_version"
for package in pkg/chartutil pkg/lint/rules; do
  helm_ldflags="$helm_ldflags -X helm.sh/helm/v3/$package.k8sVersionMajor=1 -X helm.sh/helm/v3/$package.k8sVersionMinor=$k8s_minor"
done
helm_key=$( (cd "$here/go-helm" && cat go.mod go.sum tools.go && echo "$helm_ldflags") | sha256sum | cut -c1-16)
helm_dir="$cache/helm-$helm_key"
build_helm() {
  if [ ! -x "$helm_dir/helm" ]; then
    echo "e2e setup: building helm into $helm_dir (first run on this machine: a few minutes)" >&2
    mkdir -p "$helm_dir.tmp"
    (cd "$here/go-helm" && CGO_ENABLED=0 nice -n 15 go build -ldflags "$helm_ldflags" -o "$helm_dir.tmp/helm" helm.sh/helm/v3/cmd/helm >&2)
    rm -rf "$helm_dir" && mv "$helm_dir.tmp" "$helm_dir"
  fi
}
locked helm build_helm
ln -sfn "$helm_dir/helm" "$bin/helm"
# --- end helm ---

# --- argo-sync (issue #22) ---
argo_key=$(cd "$here/go-argo" && cat go.mod go.sum argo-sync/*.go | sha256sum | cut -c1-16)
argo_dir="$cache/argo-sync-$argo_key"
build_argo() {
  if [ ! -x "$argo_dir/argo-sync" ]; then
    echo "e2e setup: building argo-sync into $argo_dir (first run on this machine: a few minutes)" >&2
    mkdir -p "$argo_dir.tmp"
    (cd "$here/go-argo" && CGO_ENABLED=0 nice -n 15 go build -o "$argo_dir.tmp/argo-sync" ./argo-sync >&2)
    rm -rf "$argo_dir" && mv "$argo_dir.tmp" "$argo_dir"
  fi
}
locked argo-sync build_argo
ln -sfn "$argo_dir/argo-sync" "$bin/argo-sync"
# --- end argo-sync ---
locked dex build_dex
ln -sfn "$dex_dir/dex" "$bin/dex"
echo "$bin"
