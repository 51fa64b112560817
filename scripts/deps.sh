#!/usr/bin/env bash
# Install the Debian packages named on the command line that are missing.
# Does nothing when all are present; runs `apt-get update` once when it must
# install; when not root (and no sudo without password), prints the exact line
# to run and fails.
set -euo pipefail
missing=()
for p in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: missing Debian packages: ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
  echo "deps: not root; run: sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=300 update -qq >&2
apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}" >&2
