#!/usr/bin/env bash
# Fiometer bootstrap: installs what a fresh Debian 12 or 13 (or Ubuntu) machine needs, then runs a job.
# A second call installs nothing (no root, no network) when nothing changed.
#   bash bootstrap.sh run    install, then run the main job (GUI with a display, headless demo without)
#   bash bootstrap.sh test   install, then run the guards (ruff, lint-imports, the mypy ratchet) and the tests
#   bash bootstrap.sh install        what running needs, then nothing else
#   bash bootstrap.sh install-test   what testing needs too (the test extra, the system tools the tests use)
#   bash bootstrap.sh windows -- ARGS   fiometer ARGS as on Windows: Windows Python, its wheels and fio.exe, in Wine
#   bash bootstrap.sh test-windows [ARGS]   the suite under Windows Python in Wine (packaging/wine/setup.sh)
#   bash bootstrap.sh package-windows   the Windows installer (dist/fiometer-<version>-setup.exe), built under Wine,
#                                       then installed silently into a fresh Wine prefix, used and uninstalled
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"
mode="${1:-run}"; shift || true
[ "${1:-}" = "--" ] && shift

# What running needs on a bare Debian 12 or 13: Python with venv, fio, the ssh client (ssh:// managers), Qt's
# libraries (offscreen, X11 and Wayland) and a font. "a|b": the first name the system has installed or apt
# knows as a real package (Debian 13 renamed libglib2.0-0 to libglib2.0-0t64; the old name is only virtual).
RUN_PKGS=(python3 python3-venv ca-certificates fio openssh-client fonts-dejavu-core
  "libglib2.0-0t64|libglib2.0-0" libgl1 libegl1 libfontconfig1 libfreetype6 libdbus-1-3 libxkbcommon0
  libxkbcommon-x11-0 libx11-xcb1 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
  libxcb-render-util0 libxcb-shape0 libxcb-xfixes0 libxcb-xkb1 libwayland-client0)
# What only the tests need: an SSH server (the ssh:// tests run one in a network namespace, never enabled as
# a service), poppler (PDF checks), the desktop-file and AppStream validators, an X server (the display
# tests), iproute2 (network namespaces) and the tools of the loop-device tests (losetup, mkfs.ext4, chattr,
# mount; mkfs.btrfs and mkfs.xfs for the in-use attacks), iostat (sysstat: the tests check the disk figures
# against it) and NSIS's makensis (a test compiles the Windows installer's script; CI builds the installer).
TEST_PKGS=(openssh-server poppler-utils desktop-file-utils appstream iproute2 e2fsprogs util-linux mount
  btrfs-progs xfsprogs sysstat xvfb xauth nsis)
PY="${PYTHON:-python3}"
case "$mode" in test | install-test | package-windows) level=test ;; *) level=run ;; esac
pkgs=("${RUN_PKGS[@]}"); [ "$level" = test ] && pkgs+=("${TEST_PKGS[@]}")

installed() { [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]; }
real_package() { apt-cache show --no-all-versions "$1" 2>/dev/null | grep '^Package:' >/dev/null; }  # (not -q: apt-cache would write into a closed pipe)
missing=()
for entry in "${pkgs[@]}"; do
  IFS='|' read -r -a alts <<<"$entry"
  ok=""; for p in "${alts[@]}"; do installed "$p" && ok=1 && break; done
  [ -n "$ok" ] || missing+=("$entry")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  need=()
  for entry in "${missing[@]}"; do
    IFS='|' read -r -a alts <<<"$entry"
    pick="${alts[0]}"; for p in "${alts[@]}"; do real_package "$p" && pick="$p" && break; done
    need+=("$pick")
  done
  echo "bootstrap: installing system packages: ${need[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# The virtualenv: Fiometer alone for running, with the test extra (pytest, ruff, mypy...) for testing. The
# stamp holds pyproject.toml's hash and the level installed; a test-level venv serves running too.
stamp=.venv/.fiometer-installed
want="$(sha256sum pyproject.toml | cut -c1-16)"
have="$(cat "$stamp" 2>/dev/null || true)"
if [ ! -x .venv/bin/python ] || { [ "$have" != "$want test" ] && [ "$have" != "$want $level" ]; }; then
  echo "bootstrap: creating the virtualenv in .venv (${level})"
  "$PY" -m venv .venv
  .venv/bin/pip install -q --upgrade pip
  if [ "$level" = test ]; then .venv/bin/pip install -q -e ".[test]"; else .venv/bin/pip install -q -e .; fi
  echo "$want $level" > "$stamp"
fi

case "$mode" in
  install) echo "bootstrap: installed; run .venv/bin/fiometer --help" ;;
  install-test) echo "bootstrap: installed with the test tools; run .venv/bin/python -m pytest -q tests/..." ;;
  run)
    if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then exec .venv/bin/fiometer gui "$@"
    else exec .venv/bin/fiometer demo "$@"; fi ;;
  test)
    .venv/bin/ruff check .
    .venv/bin/ruff format --check . >/dev/null || {  # the tree is kept formatted (.git-blame-ignore-revs)
      .venv/bin/ruff format --diff . | head -40; echo "bootstrap: run 'ruff format .'" >&2; exit 1; }
    .venv/bin/lint-imports --no-cache          # the layers of docs/architecture.md ([tool.importlinter])
    .venv/bin/python .ci/complexity_ratchet.py  # no function above complexity 15 but those listed, each at most its figure
    .venv/bin/python .ci/mypy_ratchet.py       # type errors per file may only fall (.ci/mypy-baseline.txt)
    export QT_QPA_PLATFORM=offscreen
    rc=0
    .venv/bin/python -m pytest -q -p no:cacheprovider "$@" </dev/null || rc=$?
    if [ "$rc" -eq 5 ]; then  # pytest: nothing collected; never let that pass for a green run
      echo "bootstrap: pytest collected no tests (arguments: ${*:-none}); nothing was checked" >&2
      exit 1
    fi
    exit "$rc" ;;
  windows) exec bash packaging/wine/setup.sh run "$@" ;;
  test-windows)  # unit tests, the Windows acceptance tests and the window's life cycle (docs/user-guide.md)
    if (($#)); then exec bash packaging/wine/setup.sh test "$@"; fi
    rc=0
    # with the process tests that hold for Windows too: the store's (a killed recorder, writers taking turns:
    # process_owner's Windows half) and a run in a process of its own (app.session.run_apart)
    bash packaging/wine/setup.sh test -q -rs tests/unit tests/windows tests/integration/test_store_processes.py \
      tests/integration/test_run_apart.py || rc=$?
    # the window as a Windows user has it: Qt's Windows platform on a real X display (Xvfb, Wine's driver)
    if command -v xvfb-run >/dev/null; then
      FIOMETER_WINE_DISPLAY=1 xvfb-run -a -s '-screen 0 1366x768x24' bash packaging/wine/setup.sh test -q -rs \
        tests/gui/test_window_life_cycle.py tests/gui/test_run.py tests/gui/test_close_during_run.py \
        tests/gui/test_history.py || rc=$?
    else
      echo "bootstrap: the window's tests under Windows Python need xvfb-run (apt-get install xvfb)" >&2; rc=1
    fi
    bash packaging/wine/setup.sh test-linux-side -q -rs tests/windows || rc=$?
    exit "$rc" ;;
  package-windows) exec bash packaging/wine/setup.sh package ;;
  *) echo "usage: bash bootstrap.sh [run|test|install|install-test|windows|test-windows|package-windows] [args...]" >&2; exit 2 ;;
esac
