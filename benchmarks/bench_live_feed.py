"""Feeding live data to the charts: LiveResults.add's CPU time per charted series per interval, with real
telemetry samples (fio 3.33 json+ entries, lat_percentiles=1) of a 256-job step (16 workers: 18 charted
series, ALL + manager + workers), 1 s updates.

    python benchmarks/bench_live_feed.py [--jobs 256] [--workers 16] [--intervals 60]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_telemetry import build_document  # noqa: E402

from app.engine.sampling.telemetry import StepTelemetry  # noqa: E402
from app.engine.transports.transport import Snapshot  # noqa: E402
from app.live.data import LiveResults  # noqa: E402
from tests.fio_fixtures import documents  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=256)
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--intervals", type=int, default=60)
    args = ap.parse_args()
    docs = documents("two_jobs_ramp")
    before = next(j for j in docs[1]["jobs"] if j["jobname"] == "plain")
    after = next(j for j in docs[2]["jobs"] if j["jobname"] == "plain")
    job_map = {f"job{i:03d}": ("m", f"w{i % args.workers}", f"t{i}") for i in range(args.jobs)}
    first, second = (json.loads(build_document(e, args.jobs)) for e in (before, after))
    tel = StepTelemetry(job_map)
    tel.update(Snapshot("m", 0.0, first["jobs"], first["disk_util"]))
    samples = tel.update(Snapshot("m", 1.0, second["jobs"], second["disk_util"]))
    # the same interval arriving each second (the samples' times moved on)
    batches = [[type(s)(**{**vars(s), "t": 1.0 + r}) for s in samples] for r in range(args.intervals)]
    live = LiveResults(update_seconds=1)
    live.start_step(0.0, "1: step")
    charted = sum(1 for s in samples if s.level != "target")
    t0 = time.process_time()
    for batch in batches:
        live.add(0.0, batch)
    per = (time.process_time() - t0) / args.intervals
    print(
        f"{charted} charted series: {per * 1000:.2f} ms CPU per interval = {per / charted * 1000:.3f} ms per "
        f"series per interval ({per / charted * 1024 * 1000:.0f} ms per second at 1,024 series)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
