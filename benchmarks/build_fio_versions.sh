#!/usr/bin/env bash
# Build other fio versions once, for the extended real-server tests (see README, Development).
#   bash benchmarks/build_fio_versions.sh SOURCE_DIR [VERSION...]
# SOURCE_DIR holds fio-VERSION.tar.gz archives (`git archive` of fio's release tags). Each version is
# built nice'd, one at a time, into ${FIOMETER_FIO_CACHE:-~/.cache/fiometer-fio}/VERSION/fio and skipped
# when already there. The last line printed is the FIOMETER_EXTRA_FIO value for the tests.
# A fio from the future, for the rule on protocols newer than Fiometer knows (docs/reference/fio.md):
#   VERSION+protoN         VERSION's source answering as protocol N (its statistics record unchanged)
#   VERSION+protoN+field   the same with a u64 added to struct thread_stat (the record grows by 8 bytes)
set -euo pipefail
src="${1:?usage: build_fio_versions.sh SOURCE_DIR [VERSION...]}"; shift
cache="${FIOMETER_FIO_CACHE:-$HOME/.cache/fiometer-fio}"
versions=("$@")
if ((${#versions[@]} == 0)); then
  for f in "$src"/fio-*.tar.gz; do v="${f##*/fio-}"; versions+=("${v%.tar.gz}"); done
fi
built=()
for v in "${versions[@]}"; do
  dest="$cache/$v"
  if [ ! -x "$dest/fio" ]; then
    echo "building fio $v in $dest" >&2
    work="$(mktemp -d)"
    tar -xzf "$src/fio-${v%%+*}.tar.gz" -C "$work"
    dir="$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -1)"
    if [[ "$v" =~ \+proto([0-9]+) ]]; then
      sed -i -E "s/(FIO_SERVER_VER[[:space:]]*=[[:space:]]*)[0-9]+/\1${BASH_REMATCH[1]}/" "$dir/server.h"
    fi
    if [[ "$v" == *+field ]]; then
      sed -i -E '0,/^\tuint32_t thread_number;/s//\tuint32_t thread_number;\n\tuint64_t future_field;/' "$dir/stat.h"
      grep -q future_field "$dir/stat.h"
    fi
    (cd "$dir" && nice -n 19 ./configure --disable-native >/dev/null && nice -n 19 make -j1 >/dev/null)
    mkdir -p "$dest"
    cp "$dir/fio" "$dest/fio"
    rm -rf "$work"
  fi
  "$dest/fio" --version >&2
  built+=("$dest/fio")
done
(IFS=:; echo "${built[*]}")
