#!/usr/bin/env bash
# Installs Debian's redis-server for the tests of the Redis handle store and
# of data toolset replicas, when it is missing. The tests start their own
# server on a free loopback port; they skip where it cannot be installed,
# and fail instead when CI is set.
set -euo pipefail
if command -v redis-server >/dev/null; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "install-redis: installing redis-server (apt-get)" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >&2
  # The package starts a system-wide server: the tests do not use it.
  if command -v service >/dev/null; then service redis-server stop >/dev/null 2>&1 || true; fi
else
  echo "install-redis: redis-server is missing and cannot be installed here (apt-get install redis-server); its tests will skip" >&2
fi
