#!/usr/bin/env bash
# Builds the metalsynth image from the repository's Dockerfile with podman, on a machine that cannot
# pull from an image registry: the Dockerfile's base images come from build arguments, and local
# stand-ins made from this machine take the place of the real ones.
#   RUNTIME_IMAGE  for gcr.io/distroless/nodejs24-debian12:nonroot: the node on the PATH at
#                  /nodejs/bin/node, the libraries it links (ldd), libnss, the CA bundle, /etc/passwd
#                  and /etc/group with nonroot (65532), /tmp 1777; no shell, no package manager
#   BUILD_IMAGE    for node:24-bookworm-slim: Debian bookworm (mmdebstrap --variant=minbase, from the
#                  Debian mirror apt uses here) with the node on the PATH and npm in /usr/local, and
#                  the CA bundle, which npm needs where package downloads pass a TLS-intercepting proxy
# Each stand-in is tagged with a hash of what it is made of and stays in podman's image store, so
# only the first run on a machine (or a new node, CA bundle, mirror or registry) makes it.
# Installs podman, buildah, runc and mmdebstrap when missing. Progress goes to stderr; stdout gets
#   export CONTAINERS_CONF=…   the podman configuration this machine needs (below)
#   export METALSYNTH_IMAGE=…  the image built
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${METALSYNTH_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/metalsynth-image}
mkdir -p "$cache"
log() { echo "image build: $*" >&2; }

missing=()
for tool in podman buildah runc mmdebstrap; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi

# crun, podman's default runtime, refuses to start containers on this host's hybrid cgroup layout;
# runc works. podman's default ulimits are above the hard limits here, and raising a limit takes
# CAP_SYS_RESOURCE, which this machine's root does not have: ask for the hard limits instead
# (nproc at most pid_max, beyond which it means nothing).
nofile=$(ulimit -Hn)
nproc=$(ulimit -Hu)
pid_max=$(cat /proc/sys/kernel/pid_max)
if [ "$nproc" = unlimited ] || [ "$nproc" -gt "$pid_max" ]; then nproc=$pid_max; fi
export CONTAINERS_CONF="$cache/containers.conf"
cat >"$CONTAINERS_CONF" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]

[engine]
runtime = "runc"
EOF

node=$(command -v node)
# The stand-ins carry the node on the PATH: it must be the major version the Dockerfile's bases name
# (.ci/run puts the pinned Node 24 first on the PATH; `PATH=$(.ci/node.sh 24.21.0):$PATH` does so).
wanted=$(sed -n 's/^ARG BUILD_IMAGE=node:\([0-9]*\)-.*/\1/p' "$repo/Dockerfile")
have=$("$node" -p 'process.versions.node.split(".")[0]')
if [ "$have" != "$wanted" ]; then
  log "the Dockerfile builds on Node $wanted but the node on the PATH ($node) is $("$node" --version)"
  exit 1
fi
npm_root=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
ca_bundle=/etc/ssl/certs/ca-certificates.crt
self=$(sha256sum "$0" | cut -c1-64)
digest() { sha256sum | cut -c1-16; }

# Keeps only the newest stand-in of a kind: an older tag is what a previous node or script made.
prune_others() {
  local repository=$1 keep=$2
  podman images --format '{{.Repository}}:{{.Tag}}' --filter "reference=$repository" |
    grep -vx "$keep" | xargs -r podman rmi >/dev/null 2>&1 || true
}

# What the dynamic linker loads for node, without the addresses ldd prints (they change every run).
libraries=$(ldd "$node" | grep -o '/[^ ]*')
runtime_key=$( (echo "$self" && echo "$libraries" && sha256sum "$node" "$ca_bundle") | digest)
runtime_image=localhost/metalsynth-standin/runtime:$runtime_key
if ! podman image exists "$runtime_image"; then
  log "making the runtime stand-in $runtime_image"
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  chmod 0755 "$root"
  install -D -m 0755 "$node" "$root/nodejs/bin/node"
  # Each library at the path it was found at, the dynamic linker included (which the kernel
  # executes, so 0755); and the NSS modules glibc loads by name for /etc/passwd and DNS lookups.
  for library in $libraries /lib/x86_64-linux-gnu/libnss_files.so.2 /lib/x86_64-linux-gnu/libnss_dns.so.2; do
    install -D -m 0755 "$(readlink -f "$library")" "$root$library"
  done
  install -D -m 0644 "$ca_bundle" "$root/etc/ssl/certs/ca-certificates.crt"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"$root/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
  install -d -m 0700 -o 65532 -g 65532 "$root/home/nonroot"
  install -d -m 1777 "$root/tmp"
  tar -C "$root" --numeric-owner -c . |
    podman import --change 'USER 65532:65532' --change 'WORKDIR /home/nonroot' \
      --change 'ENTRYPOINT ["/nodejs/bin/node"]' - "$runtime_image" >/dev/null
  rm -rf "$root"
  trap - EXIT
  prune_others localhost/metalsynth-standin/runtime "$runtime_image"
fi

# The mirror and suites apt uses on this machine, read now: the stand-in is made from the same.
# shellcheck disable=SC2016 # $(REPO_URI) and the others are apt-get's placeholders, not the shell's
mirrors=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' 'Created-By: Packages' |
  awk '$2 ~ /^bookworm(-updates|-security)?$/ && $3 == "main" { print "deb " $1 " " $2 " main" }' | sort -u)
if [ -z "$mirrors" ]; then
  log "apt has no bookworm source configured (apt-get update first?): cannot make the build stand-in"
  exit 1
fi
# npm's registry as this machine's npm configuration names it, given to the build's npm through the
# stand-in's environment: the Dockerfile and the repository name none.
registry=$(npm config get registry)
build_key=$( (echo "$self" && echo "$mirrors" && echo "$registry" && sha256sum "$node" "$ca_bundle" "$npm_root/package.json") | digest)
build_image=localhost/metalsynth-standin/build:$build_key
if ! podman image exists "$build_image"; then
  log "making the build stand-in $build_image (mmdebstrap bookworm minbase)"
  mapfile -t mirror_lines <<<"$mirrors"
  mmdebstrap --variant=minbase --quiet \
    --customize-hook="install -D -m 0755 '$node' \"\$1/usr/local/bin/node\"" \
    --customize-hook="mkdir -p \"\$1/usr/local/lib/node_modules\" && cp -a '$npm_root' \"\$1/usr/local/lib/node_modules/npm\"" \
    --customize-hook="ln -s ../lib/node_modules/npm/bin/npm-cli.js \"\$1/usr/local/bin/npm\" && ln -s ../lib/node_modules/npm/bin/npx-cli.js \"\$1/usr/local/bin/npx\"" \
    --customize-hook="install -D -m 0644 '$ca_bundle' \"\$1/etc/ssl/certs/ca-certificates.crt\"" \
    bookworm - "${mirror_lines[@]}" |
    podman import \
      --change "ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt" \
      --change "ENV npm_config_registry=$registry" \
      --change "ENV npm_config_update_notifier=false" \
      --change 'CMD ["node"]' - "$build_image" >/dev/null
  prune_others localhost/metalsynth-standin/build "$build_image"
fi

version=$(node -p 'require(process.argv[1]).version' "$repo/package.json")
image=localhost/metalsynth:$version
log "building $image"
# --network host: the build's npm reaches the registry the way this machine does.
podman build --quiet --network host \
  --build-arg "BUILD_IMAGE=$build_image" --build-arg "RUNTIME_IMAGE=$runtime_image" \
  --tag "$image" "$repo" >/dev/null
# The layers of earlier builds (each new package-lock.json leaves one dependency layer of about
# 550 MB) go after a week; until then a rebuild of the same dependencies reuses them.
podman image prune --force --filter until=168h >/dev/null
echo "export CONTAINERS_CONF=$CONTAINERS_CONF"
echo "export METALSYNTH_IMAGE=$image"
