#!/bin/sh
# The desk screenshots (docs/screenshots/desk-*.png): 1366x768 at 100 % and 1920x1080 at 150 %.
cd "$(dirname "$0")/../.." || exit 1
PY=${PYTHON:-python3}
xvfb-run -a -s "-screen 0 1366x768x24" "$PY" docs/screenshots/desks.py 1366x768 &&
QT_SCALE_FACTOR=1.5 xvfb-run -a -s "-screen 0 1920x1080x24" "$PY" docs/screenshots/desks.py 1920x1080-150
