#!/usr/bin/env bash
# Prints the Debian mirror URI this machine's apt is configured with, so no hostname
# is ever written into the project: the machine's own configuration is the source of truth.
set -euo pipefail
uri=""
for f in /etc/apt/sources.list.d/*.sources; do
  [ -r "$f" ] || continue
  # deb822 stanza: take the URIs of the first stanza whose Suites name a plain release.
  uri=$(awk '/^URIs:/{u=$2} /^Suites:/{ for(i=2;i<=NF;i++) if ($i !~ /-(security|updates|backports)$/) {print u; exit} }' "$f")
  [ -n "$uri" ] && break
done
if [ -z "$uri" ] && [ -r /etc/apt/sources.list ]; then
  uri=$(awk '$1=="deb" && $3 !~ /-(security|updates|backports)$/ {for(i=2;i<=NF;i++) if ($i ~ /^(https?|file):/) {print $i; exit}}' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | head -n1)
fi
if [ -z "$uri" ]; then
  echo "apt-mirror.sh: no Debian mirror found in /etc/apt/sources.list{,.d}" >&2
  exit 1
fi
echo "$uri"
