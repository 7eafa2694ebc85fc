#!/bin/sh
# The official haproxy image's entrypoint: a first argument that is an option means haproxy; haproxy
# runs in master-worker mode (-W) in the foreground (-db).
set -e
if [ "${1#-}" != "$1" ]; then
  set -- haproxy "$@"
fi
if [ "$1" = haproxy ]; then
  shift
  set -- haproxy -W -db "$@"
fi
exec "$@"
