#!/usr/bin/env bash
# Install an unpacked Fiometer build (this folder) with a menu entry.
#   sudo ./install.sh                   -> /opt/fiometer, /usr/local/bin/fiometer, /usr/local/share/...
#   ./install.sh --user                 -> ~/.local/opt/fiometer, ~/.local/bin/fiometer, ~/.local/share/...
#   ./install.sh --prefix DIR           -> DIR/opt/fiometer, DIR/bin, DIR/share (for packagers and tests)
#   ./install.sh --uninstall [--user|--prefix DIR]
# fio is not included: install it from your distribution (sudo apt-get install fio).
set -euo pipefail
here="$(cd "$(dirname "$(readlink -f "$0")")" && pwd)"
app_id=io.github.fiometer.Fiometer
prefix=/usr/local; appdir=/opt/fiometer; uninstall=""
while (($#)); do
  case "$1" in
    --user) prefix="$HOME/.local"; appdir="$HOME/.local/opt/fiometer" ;;
    --prefix) prefix="$2"; appdir="$2/opt/fiometer"; shift ;;
    --uninstall) uninstall=1 ;;
    *) echo "usage: $0 [--user | --prefix DIR] [--uninstall]" >&2; exit 2 ;;
  esac
  shift
done
share="$prefix/share"
files=("applications/$app_id.desktop" "metainfo/$app_id.metainfo.xml" "icons/hicolor/scalable/apps/$app_id.svg")
for s in 16 32 48 64 128 256; do files+=("icons/hicolor/${s}x${s}/apps/$app_id.png"); done

if [ -n "$uninstall" ]; then
  for f in "${files[@]}"; do rm -f "$share/$f"; done
  rm -f "$prefix/bin/fiometer"
  rm -rf "$appdir"
  echo "Fiometer removed from $appdir"
  exit 0
fi

[ -x "$here/fiometer" ] || { echo "install.sh: run it from an unpacked Fiometer build" >&2; exit 1; }
mkdir -p "$(dirname "$appdir")" "$prefix/bin"
if [ "$here" != "$appdir" ]; then
  rm -rf "$appdir"
  cp -a "$here" "$appdir"
fi
ln -sfn "$appdir/fiometer" "$prefix/bin/fiometer"
for f in "${files[@]}"; do install -Dm644 "$here/share/$f" "$share/$f"; done
command -v update-desktop-database >/dev/null && update-desktop-database -q "$share/applications" || true
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t "$share/icons/hicolor" || true
echo "Fiometer installed in $appdir; command: $prefix/bin/fiometer"
command -v fio >/dev/null || echo "Now install fio: sudo apt-get install fio (Debian/Ubuntu) or sudo dnf install fio"
