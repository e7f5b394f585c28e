#!/usr/bin/env bash
# CI stage: Fiometer on Debian 13 (trixie), the current Debian stable, beside the Debian 12 machine CI runs on.
#   bash .ci/debian13.sh servers [PYTEST ARGS]   Debian 13's own fio (apt-get install fio: 3.39-1, protocol 109) as
#                                  `fio --server` inside a trixie chroot on 127.0.0.x; the real-server tests
#                                  run from this checkout's .venv against it, then `fiometer probe` and
#                                  `fiometer run --manager` against one such server
#   bash .ci/debian13.sh suite [PYTEST ARGS]   in that chroot, as a user on a bare Debian 13 would:
#                                  `bash bootstrap.sh run` (headless: the demo), again (it must install
#                                  nothing), then `bash bootstrap.sh test` on the part of the suite given
#                                  (default $TRIXIE_TESTS below; `tests` for all of it) under Python 3.13
#   bash .ci/debian13.sh           both
# Needs root (debootstrap, chroot, mounts) and Debian's archive; without them it says why and exits 0.
# The bare trixie (debootstrap --variant=minbase) is cached in ~/.cache/fiometer-trixie (stamped: a later
# run only checks it); each run works on an overlay of it, so every run starts from a bare Debian 13 and
# what it installs is gone afterwards (apt's downloads and pip's cache are kept).
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
what="${1:-all}"; shift || true
cache="${FIOMETER_TRIXIE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fiometer-trixie}"
KEY="debootstrap --variant=minbase trixie (1)"
# the default share of the suite inside the chroot (CI's 90 minutes: docs/user-guide.md §"What CI runs")
TRIXIE_TESTS=(tests/unit tests/integration/test_smoke.py tests/integration/test_first_hour_cli.py)
# the real-server tests: every test that talks to a `fio --server` through tests/fio_servers.py
SERVER_TESTS=(tests/integration/test_remote_fio.py tests/integration/test_remote_host.py
  tests/integration/test_remote_managers.py tests/integration/test_remote_faults.py
  tests/integration/test_remote_file_safety.py tests/integration/test_remote_protocols.py
  tests/integration/test_ssh_manager.py tests/integration/test_network_workers.py
  tests/integration/test_many_hosts.py tests/integration/test_build_endpoints.py
  tests/integration/test_start_skew.py)

say() { echo "debian13: $*"; }
skip() { say "SKIPPED: $*"; exit 0; }
[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, chroot and mounts)"
mkdir -p "$cache/archives"

if ! command -v debootstrap >/dev/null 2>&1; then
  say "installing debootstrap"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      debootstrap >/dev/null; } || skip "debootstrap is missing and apt cannot install it (no network?)"
fi
if [ "$(cat "$cache/base.stamp" 2>/dev/null || true)" != "$KEY" ]; then
  say "making a bare Debian 13 in $cache/base ($KEY)"
  rm -rf "$cache/base" "$cache/base.tmp" "$cache/base.stamp"
  t0=$SECONDS
  debootstrap --variant=minbase trixie "$cache/base.tmp" >"$cache/debootstrap.log" 2>&1 || {
    tail -3 "$cache/debootstrap.log"; rm -rf "$cache/base.tmp"
    skip "debootstrap trixie failed (no network to Debian's archive?): $cache/debootstrap.log"; }
  mv "$cache/base.tmp" "$cache/base"
  echo "$KEY" >"$cache/base.stamp"
  say "debootstrap took $((SECONDS - t0)) s"
else
  say "cached bare Debian 13: $cache/base ($(cat "$cache/base/etc/debian_version"))"
fi

run="$(mktemp -d "${TMPDIR:-/tmp}/fiometer-trixie.XXXXXX")"
root="$run/root"
mkdir -p "$run/upper" "$run/work" "$root" "$run/bin"
cleanup() {
  for pid in $(cat "$run"/server.pid 2>/dev/null); do kill -- "-$pid" 2>/dev/null || true; done
  umount -R "$root" 2>/dev/null || umount -R -l "$root" 2>/dev/null || true
  rm -rf --one-file-system "$run"  # never into a bind of /dev, /proc or /sys still mounted
}
trap cleanup EXIT
trap 'exit 143' TERM INT  # CI's time guard (timeout) ends the stage: the mounts still go
mount -t overlay overlay -o "lowerdir=$cache/base,upperdir=$run/upper,workdir=$run/work" "$root"
for d in proc sys dev; do mount --rbind "/$d" "$root/$d"; mount --make-rslave "$root/$d"; done
mount --bind "$cache/archives" "$root/var/cache/apt/archives"
mkdir -p "$root/root/.cache/pip" "${PIP_CACHE_DIR:-$HOME/.cache/pip}"
mount --bind "${PIP_CACHE_DIR:-$HOME/.cache/pip}" "$root/root/.cache/pip"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# the chroot trusts what this machine trusts (a proxy's certificate authority, if the machine has one)
mkdir -p "$root/usr/local/share/ca-certificates"
cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" 2>/dev/null || true
in_root() {
  chroot "$root" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive CI="${CI:-}" "$@"
}
in_root apt-get update -qq >/dev/null 2>&1 || skip "apt-get update fails inside the chroot (no network to Debian's archive?)"

servers() {
  local t0=$SECONDS tests=("${SERVER_TESTS[@]}")
  (($#)) && tests=("$@")
  DEBIAN_FRONTEND=noninteractive in_root apt-get install -y -qq --no-install-recommends fio >/dev/null
  say "Debian 13's fio: $(in_root dpkg-query -W -f='${Version}' fio), $(in_root fio --version)"
  # the same /tmp on both sides: the tests' files (pytest's tmp_path) are where the server looks
  mount --bind /tmp "$root/tmp"
  # a program named fio that runs Debian 13's: what tests/fio_servers.py and the ssh:// tests start
  printf '#!/bin/sh\nexec %q %q /usr/bin/fio "$@"\n' "$(command -v chroot)" "$root" >"$run/bin/fio"
  chmod +x "$run/bin/fio"
  local rc=0
  ( cd "$src" && QT_QPA_PLATFORM=offscreen FIOMETER_SERVER_FIO="$run/bin/fio" \
      .venv/bin/python -m pytest -q -p no:cacheprovider -rs "${tests[@]}" </dev/null ) || rc=$?
  # the README's commands against one server of Debian 13's fio
  local host=127.0.0.77 port
  port="$(cd "$src" && .venv/bin/python -c 'from tests.fio_servers import free_port; print(free_port("127.0.0.77"))')"
  setsid "$run/bin/fio" "--server=$host,$port" >/dev/null 2>&1 &
  echo $! >"$run/server.pid"
  for _ in $(seq 50); do (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null && break; sleep 0.1; done
  local data; data="$(mktemp -d /tmp/fiometer-trixie-run.XXXXXX)"
  "$src/.venv/bin/fiometer" probe --db "$data/r.db" "$host:$port" || rc=$?
  "$src/.venv/bin/fiometer" run --db "$data/r.db" "$src/resources/examples/vmware-unofficial-storage-performance.icf" \
    --manager "PB-W2K3-04=$host:$port" --map "C:=$data/iobw.tst" --allow-unverified-writes PB-W2K3-04 --run-time 1 --test-file-size 16M || rc=$?
  rm -rf "$data"
  kill -- "-$(cat "$run/server.pid")" 2>/dev/null || true
  rm -f "$run/server.pid"
  umount "$root/tmp"
  say "servers stage: $((SECONDS - t0)) s, exit $rc"
  return "$rc"
}

suite() {
  local t0=$SECONDS rc=0
  mkdir -p "$root/root/fiometer"
  tar -C "$src" --exclude=./.venv -cf - . | tar -C "$root/root/fiometer" -xf -
  in_root bash -c 'cd /root/fiometer && bash bootstrap.sh run' </dev/null || rc=$?
  say "bootstrap.sh run on a bare Debian 13: exit $rc, $((SECONDS - t0)) s"
  local again; again="$(in_root bash -c 'cd /root/fiometer && bash bootstrap.sh run' </dev/null 2>&1)" || rc=$?
  if grep -q "bootstrap: installing\|bootstrap: creating" <<<"$again"; then
    say "a second bootstrap.sh run installed again:"; grep "bootstrap:" <<<"$again"; rc=1
  fi
  local t1=$SECONDS
  (($#)) || set -- "${TRIXIE_TESTS[@]}"
  in_root bash -c 'cd /root/fiometer && bash bootstrap.sh test -rs "$@"' bash "$@" </dev/null || rc=$?
  say "bootstrap.sh test ${*}: $((SECONDS - t1)) s; suite stage $((SECONDS - t0)) s, exit $rc"
  return "$rc"
}

rc=0
case "$what" in
  servers) servers "$@" || rc=$? ;;
  suite) suite "$@" || rc=$? ;;
  all) servers || rc=$?; suite "$@" || rc=$? ;;
  *) echo "usage: bash .ci/debian13.sh [servers|suite [PYTEST ARGS]|all]" >&2; exit 2 ;;
esac
exit "$rc"
