#!/usr/bin/env bash
# Makes the images the e2e node (test/e2e/node) runs, on a machine that cannot pull from a registry:
# local stand-ins for the images the rendered manifests name, and for the test hosts they point at.
#   build.sh BIN_DIR   (BIN_DIR holds the kubectl and pause the node setup built)
# One Debian bookworm root file system (mmdebstrap --variant=minbase, from the mirror apt uses here)
# with Debian's haproxy, openssh-server and -client, ansible-core and openssl, the kubectl of the
# node's release, the Dex binary the e2e suite builds (`test/e2e/setup.sh dex`), and the scripts
# beside this one, is imported once into podman; each stand-in is that one layer with the
# configuration of the image it stands for:
#   kubectl     for bitnami/kubectl: kubectl on the PATH, /bin/sh, user 1001
#   haproxy     for haproxy: Debian's haproxy behind the official image's entrypoint and command
#   jump-host   for quay.io/airshipit/jump-host: sshd on 22, user ubuntu (1000)
#   installer   for bpa-operator-kud and bpa-software-installer: ./installer in /opt/kud (Ansible
#               over the mounted hosts.ini with the mounted key), /bin/sh and ssh for the Software
#               Job's script
#   dex         for dexidp/dex: the dex binary at /usr/local/bin/dex, where the rendered command
#               starts it, the image's user 1001 and command; no entrypoint (the image's would
#               template the config with gomplate; the rendered command goes past it)
#   test-host   a host of the test site (not run by the node: by podman, in a network namespace of
#               its own): sshd, a stand-in tenant kube-apiserver on 6443, a local package source
#   pause       the pods' sandbox process (the node's containerd's sandbox_image)
# Everything is tagged with a hash of what it is made of and stays in podman's image store; all but
# the test host's are also saved into one archive for `ctr images import`, kept beside the node
# binaries.
# Only the first run on a machine (about 2 minutes) makes them. Progress goes to stderr; stdout gets
#   export CONTAINERS_CONF=…        the podman configuration this machine needs (as test/image/build.sh)
#   export NODE_STANDINS=…          the archive for containerd
#   export NODE_STANDIN_<ROLE>=…    each image's name (KUBECTL, HAPROXY, JUMP_HOST, INSTALLER, DEX,
#                                   PAUSE, TEST_HOST)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$1" && pwd)
cache=${METALSYNTH_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/metalsynth-e2e}/standins
mkdir -p "$cache"
log() { echo "node stand-ins: $*" >&2; }

missing=()
for tool in podman buildah runc mmdebstrap; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi

# As test/image/build.sh: runc rather than crun on this host's hybrid cgroups, and the hard limits
# as the containers' ulimits (raising a limit takes CAP_SYS_RESOURCE, which root lacks here).
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

# shellcheck disable=SC2016 # $(REPO_URI) and the others are apt-get's placeholders, not the shell's
mirrors=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' 'Created-By: Packages' |
  awk '$2 ~ /^bookworm(-updates|-security)?$/ && $3 == "main" { print "deb " $1 " " $2 " main" }' | sort -u)
if [ -z "$mirrors" ]; then
  log "apt has no bookworm source configured (apt-get update first?)"
  exit 1
fi
packages=haproxy,openssh-server,openssh-client,ansible-core,openssl
# Built (or found in its cache) as the e2e suite's Dex is; progress goes to stderr.
dex=$(bash "$here/../../e2e/setup.sh" dex)
key=$( (echo "$mirrors" "$packages" && cd "$here" && sha256sum build.sh installer test-host host-services \
  jump-host docker-entrypoint.sh && sha256sum "$bin/kubectl" "$bin/pause" "$dex") | sha256sum | cut -c1-16)
prefix=localhost/metalsynth-node
roles=(kubectl haproxy jump-host installer dex pause test-host)
archive=$cache/standins-$key.tar
image() { echo "$prefix/$1:$key"; }

have_all() {
  [ -s "$archive" ] || return 1
  for role in "${roles[@]}"; do podman image exists "$(image "$role")" || return 1; done
}

if ! have_all; then
  log "making the stand-ins $prefix/*:$key (first run on this machine: about 2 minutes)"
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  mapfile -t mirror_lines <<<"$mirrors"
  mmdebstrap --variant=minbase --quiet --include="$packages" bookworm "$root/rootfs" "${mirror_lines[@]}"
  rootfs=$root/rootfs
  # Every image made from this tree would share the host keys the package's postinst made.
  rm -f "$rootfs"/etc/ssh/ssh_host_*
  install -m 0755 "$bin/kubectl" "$rootfs/usr/local/bin/kubectl"
  install -m 0755 "$dex" "$rootfs/usr/local/bin/dex"
  install -m 0755 "$here/docker-entrypoint.sh" "$here/jump-host" "$here/test-host" "$here/host-services" \
    "$rootfs/usr/local/bin/"
  install -D -m 0755 "$here/installer" "$rootfs/opt/kud/installer"
  install -d "$rootfs/usr/local/etc/haproxy"
  chroot "$rootfs" useradd --create-home --uid 1000 --shell /bin/bash ubuntu
  # No PAM in these containers (pam_loginuid cannot write the audit login uid without
  # CAP_AUDIT_CONTROL): sshd checks the password field itself, and `!` would mean a locked account.
  chroot "$rootfs" usermod --password '*' ubuntu
  install -d -m 0700 -o 1000 -g 1000 "$rootfs/home/ubuntu/.ssh"
  install -d -m 0700 "$rootfs/root/.ssh"
  printf 'UsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n' \
    >"$rootfs/etc/ssh/sshd_config.d/metalsynth-standin.conf"

  # The test hosts' package source (the Software Job's `apt-get install` resolves against it, with no
  # network): two small packages, one of them in the version a Software CR pins.
  repo=$rootfs/srv/packages
  mkdir -p "$repo"
  for spec in metalsynth-probe:1.0 metalsynth-probe-extra:2.1-1; do
    name=${spec%%:*}
    version=${spec#*:}
    package=$root/$name
    install -d "$package/DEBIAN" "$package/usr/share/$name"
    printf 'Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: metalsynth e2e <e2e@metalsynth.invalid>\nDescription: a package the e2e Software Job installs\n' \
      "$name" "$version" >"$package/DEBIAN/control"
    echo "$name $version" >"$package/usr/share/$name/installed"
    dpkg-deb --root-owner-group --build "$package" "$repo/${name}_${version}_all.deb" >/dev/null
  done
  (
    cd "$repo"
    for deb in *.deb; do
      dpkg-deb --field "$deb"
      printf 'Filename: ./%s\nSize: %s\nSHA256: %s\n\n' "$deb" "$(stat -c %s "$deb")" "$(sha256sum "$deb" | cut -c1-64)"
    done >Packages
  )
  echo 'deb [trusted=yes] file:/srv/packages ./' >"$rootfs/etc/apt/sources.list"
  rm -f "$rootfs"/etc/apt/sources.list.d/*
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin

  base=$prefix/base:$key
  tar -C "$rootfs" --numeric-owner -c . | podman import --quiet --change 'ENV LANG=C.UTF-8' - "$base" >/dev/null
  # One configuration per stand-in over the same layer (buildah config, then a commit with no
  # changes: the layer is shared, in podman's store and in containerd's).
  configure() {
    local role=$1
    shift
    local container
    container=$(buildah from --pull-never "$base")
    buildah config "$@" "$container" >/dev/null
    buildah commit --quiet --rm "$container" "$(image "$role")" >/dev/null
  }
  configure kubectl --user 1001 --entrypoint '["kubectl"]' --cmd '["--help"]'
  configure haproxy --entrypoint '["docker-entrypoint.sh"]' \
    --cmd '["haproxy", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]' --stop-signal SIGUSR1
  configure jump-host --entrypoint '[]' --cmd '["/usr/local/bin/jump-host"]' --port 22
  configure installer --entrypoint '[]' --workingdir /opt/kud --cmd '["./installer"]'
  configure dex --user 1001:1001 --entrypoint '[]' --cmd '["dex", "serve", "/etc/dex/config.docker.yaml"]'
  configure test-host --entrypoint '[]' --cmd '["/usr/local/bin/test-host"]'
  podman rmi "$base" >/dev/null

  install -D -m 0755 "$bin/pause" "$root/pause/pause"
  tar -C "$root/pause" --numeric-owner -c pause |
    podman import --quiet --change 'ENTRYPOINT ["/pause"]' - "$(image pause)" >/dev/null

  names=()
  for role in "${roles[@]}"; do [ "$role" = test-host ] || names+=("$(image "$role")"); done
  podman save --quiet --multi-image-archive --format docker-archive --output "$archive.tmp" "${names[@]}"
  mv "$archive.tmp" "$archive"
  rm -rf "$root"
  trap - EXIT
  # Older stand-ins (another key) and their archives go.
  podman images --format '{{.Repository}}:{{.Tag}}' --filter "reference=$prefix/*" | grep -v ":$key\$" |
    xargs -r podman rmi >/dev/null 2>&1 || true
  find "$cache" -maxdepth 1 -name 'standins-*.tar' ! -name "standins-$key.tar" -delete
fi

echo "export CONTAINERS_CONF=$CONTAINERS_CONF"
echo "export NODE_STANDINS=$archive"
for role in "${roles[@]}"; do
  variable=NODE_STANDIN_$(echo "$role" | tr 'a-z-' 'A-Z_')
  echo "export $variable=$(image "$role")"
done
