#!/usr/bin/env bash
# Fiometer bootstrap: installs what a fresh Debian/Ubuntu machine needs, then runs a job.
#   bash bootstrap.sh run    install, then run the main job (GUI with a display, headless demo without)
#   bash bootstrap.sh test   install, then run the guards (ruff, lint-imports, the mypy ratchet) and the tests
#   bash bootstrap.sh install
#   bash bootstrap.sh windows -- ARGS   fiometer ARGS as on Windows: Windows Python, its wheels and fio.exe, in Wine
#   bash bootstrap.sh test-windows [ARGS]   the suite under Windows Python in Wine (packaging/wine/setup.sh)
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"
mode="${1:-run}"; shift || true
[ "${1:-}" = "--" ] && shift

# Everything a bare Debian 12 lacks: Python with venv, fio, ssh (remote managers), Qt's libraries (offscreen,
# X11 and Wayland), fonts, poppler (PDF checks), the desktop-file and AppStream validators, and the tools of
# the loop-device tests (losetup, mkfs.ext4, chattr, mount; mkfs.btrfs and mkfs.xfs for the in-use attacks).
APT_PKGS=(python3 python3-venv ca-certificates fio openssh-client openssh-server poppler-utils fonts-dejavu-core
  desktop-file-utils appstream e2fsprogs util-linux mount btrfs-progs xfsprogs
  libglib2.0-0 libgl1 libegl1 libfontconfig1 libfreetype6 libdbus-1-3 libxkbcommon0 libxkbcommon-x11-0
  libx11-xcb1 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0 libxcb-render-util0
  libxcb-shape0 libxcb-xfixes0 libxcb-xkb1 libwayland-client0 xvfb xauth)
PY="${PYTHON:-python3}"

need=()
for p in "${APT_PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
if ((${#need[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "bootstrap: installing system packages: ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

stamp=.venv/.fiometer-installed
want="$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "bootstrap: creating the virtualenv in .venv"
  "$PY" -m venv .venv
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -e ".[test]"
  echo "$want" > "$stamp"
fi

case "$mode" in
  install) echo "bootstrap: installed; run .venv/bin/fiometer --help" ;;
  run)
    if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then exec .venv/bin/fiometer gui "$@"
    else exec .venv/bin/fiometer demo "$@"; fi ;;
  test)
    .venv/bin/ruff check .
    .venv/bin/ruff format --check . >/dev/null || {  # the tree is kept formatted (.git-blame-ignore-revs)
      .venv/bin/ruff format --diff . | head -40; echo "bootstrap: run 'ruff format .'" >&2; exit 1; }
    .venv/bin/lint-imports --no-cache          # the layers of docs/architecture.md ([tool.importlinter])
    .venv/bin/ruff check --select C901 --config 'lint.mccabe.max-complexity=15' app/engine  # no engine function above complexity 15
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
  test-windows)  # unit tests and the Windows acceptance tests (docs/user-guide.md says why not the rest)
    if (($#)); then exec bash packaging/wine/setup.sh test "$@"; fi
    rc=0
    bash packaging/wine/setup.sh test -q -rs tests/unit tests/windows || rc=$?
    bash packaging/wine/setup.sh test-linux-side -q -rs tests/windows || rc=$?
    exit "$rc" ;;
  *) echo "usage: bash bootstrap.sh [run|test|install|windows|test-windows] [args...]" >&2; exit 2 ;;
esac
