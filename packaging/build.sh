#!/usr/bin/env bash
# Build the Linux one-folder app with PyInstaller, then smoke-test the build.
#   bash packaging/build.sh            -> dist/fiometer/ and dist/fiometer-<version>-linux-<arch>.tar.gz
#   PYTHON=/path/to/python3.11 ...     base interpreter for the build virtualenv (needs libpython .so)
#   FIOMETER_NO_TAR=1 ...              skip the tarball
# The build runs in its own virtualenv (build/venv) with exactly the declared dependencies plus the
# `package` extra (PyInstaller, pinned in pyproject.toml), so nothing from a development venv leaks in.
# The smoke test needs fio and Qt's system libraries (bash bootstrap.sh install provides both).
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
PY="${PYTHON:-python3}"
VENV=build/venv
t0=$(date +%s)

want="$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.fiometer-build" 2>/dev/null)" != "$want" ]; then
  echo "build: creating $VENV with the package extra"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
  "$VENV/bin/pip" install -q -e ".[package]"
  echo "$want" > "$VENV/.fiometer-build"
fi
t1=$(date +%s)

echo "build: PyInstaller $("$VENV/bin/pyinstaller" --version)"
"$VENV/bin/pyinstaller" --noconfirm --clean --log-level WARN \
  --distpath dist --workpath build/pyinstaller packaging/fiometer.spec
t2=$(date +%s)

# Desktop integration files next to the app: packaging/linux/install.sh installs them.
app_id=io.github.fiometer.Fiometer
out=dist/fiometer
install -Dm644 "packaging/linux/$app_id.desktop" "$out/share/applications/$app_id.desktop"
install -Dm644 "packaging/linux/$app_id.metainfo.xml" "$out/share/metainfo/$app_id.metainfo.xml"
install -Dm644 resources/icons/fiometer.svg "$out/share/icons/hicolor/scalable/apps/$app_id.svg"
for s in 16 32 48 64 128 256; do
  install -Dm644 "resources/icons/fiometer-$s.png" "$out/share/icons/hicolor/${s}x${s}/apps/$app_id.png"
done
install -Dm755 packaging/linux/install.sh "$out/install.sh"

echo "build: smoke test of the frozen app"
QT_QPA_PLATFORM=offscreen "$out/fiometer" --smoke
t3=$(date +%s)

version="$("$out/fiometer" --version | awk '{print $2}')"
if [ -z "${FIOMETER_NO_TAR:-}" ]; then
  tarball="dist/fiometer-$version-linux-$(uname -m).tar.gz"
  tar -C dist -czf "$tarball" fiometer
  echo "build: $tarball $(du -h "$tarball" | cut -f1)"
fi
echo "build: dist/fiometer $(du -sh "$out" | cut -f1) ($(find "$out" -type f | wc -l) files);" \
     "venv $((t1 - t0)) s, PyInstaller $((t2 - t1)) s, smoke $((t3 - t2)) s, total $(($(date +%s) - t0)) s"
