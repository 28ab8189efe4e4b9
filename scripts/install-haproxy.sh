#!/usr/bin/env bash
# Installs Debian's haproxy for the replica-kill test (cmd/toolwire
# TestServeReplicaKill, through internal/testhaproxy) and bench/scaleout.sh,
# when it is missing. The test starts its own haproxy on a free loopback
# port; it skips where haproxy cannot be installed, and fails instead when
# CI is set. Measured with Debian bookworm's 2.6.12-1+deb12u4.
set -euo pipefail
if command -v haproxy >/dev/null; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "install-haproxy: installing haproxy (apt-get)" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >&2
  # The package may start a system-wide haproxy: the tests do not use it.
  if command -v service >/dev/null; then service haproxy stop >/dev/null 2>&1 || true; fi
else
  echo "install-haproxy: haproxy is missing and cannot be installed here (apt-get install haproxy); the replica-kill test will skip" >&2
fi
