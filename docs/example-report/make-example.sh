#!/bin/bash
# Regenerates the example report from real runs: three "before" runs on a test file on the disk, three
# "after" runs on tmpfs (the change under test), each step 5 s after a 1 s ramp-up, 32 MiB test files.
#   make-example.sh DISK_DIR TMPFS_DIR WORK_DIR     (run from the repository root; TMPFS_DIR is a tmpfs mount,
#                                                     e.g. mount -t tmpfs -o size=128M tmpfs TMPFS_DIR)
set -euo pipefail
DISK=$1 TMPFS=$2 WORK=$3
PY=${PYTHON:-python}
OUT=docs/example-report
DB=$WORK/example.db
rm -f "$DB" "$DISK/iobw.tst" "$TMPFS/iobw.tst"
$PY -m app.cli import app/resources/examples/vmware-unofficial-storage-performance.icf -o "$WORK/plan.json" >/dev/null
run() {  # tag, folder, first run of this side?
  local arm=(); [ "$3" = no ] && arm=(--allow-write C:)   # the test file exists from the side's first run
  $PY -m app.cli --db "$DB" run "$WORK/plan.json" --map "C:=$2/iobw.tst" --test-file-size 32M \
      --run-time 5 --ramp-up 1 --tag "$1" "${arm[@]}" >/dev/null
}
for i in 1 2 3; do run before "$DISK" $([ $i = 1 ] && echo yes || echo no); done
for i in 1 2 3; do run after "$TMPFS" $([ $i = 1 ] && echo yes || echo no); done
for i in 1 2 3; do $PY -m app.cli --db "$DB" rename $i "Test file on the ext4 disk, run $i" >/dev/null; done
for i in 4 5 6; do $PY -m app.cli --db "$DB" rename $i "Test file on tmpfs, run $((i - 3))" >/dev/null; done
$PY -m app.cli --db "$DB" note 1 "The template as shipped (QD 64), 32 MiB test file on the VM's ext4 disk."
$PY -m app.cli --db "$DB" note 4 "The same plan with the test file on tmpfs (memory)."
$PY -m app.cli --db "$DB" runs
$PY -m app.cli --db "$DB" report 1,2,3 --compare 4,5,6 --labels "ext4 disk,tmpfs" \
    --html $OUT/report.html --pdf $OUT/report.pdf --xlsx $OUT/report.xlsx --csv $OUT/report.csv \
    --csv-tables $OUT/report-tables.csv \
    --title "Test file placement: ext4 disk and tmpfs" --client "Example Client Ltd" \
    --author "A. Consultant" --company "Storage Practice" --date 2026-11-24 --paper A4
$PY -m app.cli --db "$DB" export 4 --samples $OUT/run-4-samples.csv
rm -f $OUT/report-page-*.png
pdftoppm -png -r 60 $OUT/report.pdf $OUT/report-page
