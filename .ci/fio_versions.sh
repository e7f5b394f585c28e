#!/usr/bin/env bash
# CI stage: the real-server tests against other fio releases than the system's, each built from the source
# tarballs in $FIOMETER_SHARED/fio-src (CI sets it to the shared/ beside the checkout; the suite itself never
# reads it). Without them it says so and exits 0.
#   bash .ci/fio_versions.sh [VERSION ...]   default: $VERSIONS below
# Builds are cached in ~/.cache/fiometer-fio-builds, one folder per tarball's hash (a later run only runs
# the tests); a build takes 2-3 minutes on 2 cores (./configure --disable-native && make -j2).
# Then test_remote_fio.py and test_remote_protocols.py with all of them (and test_start_skew.py with the releases) in
# $FIOMETER_EXTRA_FIO (each test of a real server runs with each fio; start skew mixes versions), and for
# each version the CLI's remote managers with every server of that fio ($FIOMETER_SERVER_FIO).
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
VERSIONS=(3.31 3.35 3.38 3.39-proto109 3.42)
(($#)) && VERSIONS=("$@")
ALL_VERSIONS_TESTS=(tests/integration/test_remote_fio.py tests/integration/test_remote_protocols.py)
# start skew with the releases only: the builds from the future are refused (126 with a field added) or
# calibrated at connection (125), which shifts that manager's start by the calibration job's time
RELEASES_TESTS=(tests/integration/test_start_skew.py)
PER_VERSION_TESTS=(tests/integration/test_remote_managers.py tests/integration/test_remote_host.py)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/fiometer-fio-builds"
say() { echo "fio-versions: $*"; }
skip() { say "SKIPPED: $*"; exit 0; }
tarballs="${FIOMETER_SHARED:-}/fio-src"
[ -n "${FIOMETER_SHARED:-}" ] && [ -d "$tarballs" ] ||
  skip "no fio sources: set FIOMETER_SHARED to a folder with fio-src/fio-VERSION.tar.gz (CI: ../shared)"

deps=(build-essential libaio-dev zlib1g-dev)
missing=()
for p in "${deps[@]}"; do
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  say "installing ${missing[*]}"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
      --no-install-recommends "${missing[@]}" >/dev/null; } || skip "cannot install ${missing[*]} (no network?)"
fi

built=()
mkdir -p "$cache"
for v in "${VERSIONS[@]}"; do
  tarball="$tarballs/fio-$v.tar.gz"
  [ -f "$tarball" ] || { say "no $tarball: fio $v not checked"; continue; }
  dir="$cache/fio-$v-$(sha256sum "$tarball" | cut -c1-16)"
  if [ ! -x "$dir/fio" ]; then
    t0=$SECONDS
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
    tar -xzf "$tarball" -C "$dir.tmp" --strip-components=1
    if (cd "$dir.tmp" && ./configure --disable-native >build.log 2>&1 && make -j2 >>build.log 2>&1); then
      rm -rf "$dir" && mv "$dir.tmp" "$dir"
      say "built fio $v in $((SECONDS - t0)) s"
    else
      tail -5 "$dir.tmp/build.log"; say "fio $v did not build ($dir.tmp/build.log)"; exit 1
    fi
  fi
  built+=("$dir/fio")
done
((${#built[@]})) || skip "none of ${VERSIONS[*]} is in $tarballs"
# two builds from the future for the rule on protocols newer than Fiometer's table (test_remote_protocols.py):
# 3.42 answering as protocol 125 (decoded after a calibration) and as 126 with a field added (refused)
future=""
if [ -f "$tarballs/fio-3.42.tar.gz" ]; then
  future="$(bash "$src/benchmarks/build_fio_versions.sh" "$tarballs" 3.42+proto125 3.42+proto126+field)"
fi

rc=0
cd "$src"
export QT_QPA_PLATFORM=offscreen
t0=$SECONDS
FIOMETER_EXTRA_FIO="$(IFS=:; echo "${built[*]}")${future:+:$future}" .venv/bin/python -m pytest -q -p no:cacheprovider -rs \
  "${ALL_VERSIONS_TESTS[@]}" </dev/null || rc=$?
say "${ALL_VERSIONS_TESTS[*]} with ${#built[@]} versions${future:+ and the builds from the future}: $((SECONDS - t0)) s"
t0=$SECONDS
FIOMETER_EXTRA_FIO="$(IFS=:; echo "${built[*]}")" .venv/bin/python -m pytest -q -p no:cacheprovider -rs \
  "${RELEASES_TESTS[@]}" </dev/null || rc=$?
say "${RELEASES_TESTS[*]} with ${#built[@]} versions: $((SECONDS - t0)) s"
for fio in "${built[@]}"; do
  t0=$SECONDS
  FIOMETER_SERVER_FIO="$fio" .venv/bin/python -m pytest -q -p no:cacheprovider -rs "${PER_VERSION_TESTS[@]}" \
    </dev/null || rc=$?
  say "$("$fio" --version) ($fio): ${PER_VERSION_TESTS[*]} $((SECONDS - t0)) s"
done
say "exit $rc"
exit "$rc"
