"""Several real `fio --server` managers at once (127.0.0.x), recorded into a real database: every
interval of every manager is stored, and each manager's final numbers are its server's own report.
(benchmarks/bench_many_hosts.py does the same at 8-64 servers, live in the window.)"""

from __future__ import annotations

import pytest

from app.engine.run.managers import remote_endpoint
from app.engine.run.runner import Runner, RunOptions
from app.model.plan import SpecLine, Target
from app.session.recording import StoreRecorder
from app.store import get_run, open_store
from tests.helpers import grid, prepared
from tests.stored_vs_fio import check_manager

pytestmark = [pytest.mark.fio, pytest.mark.slow]

SERVERS = 4


@pytest.mark.parametrize(
    ("decode_apart", "per_process"),
    [(SERVERS, 16), (SERVERS, 2), (0, 16)],
    ids=["decoded-apart", "decoded-in-two-processes", "in-process"],
)
def test_every_interval_of_every_manager_is_stored_and_ends_with_its_servers_report(
    tmp_path, fio_server, decode_apart, per_process
):
    plan = grid(SERVERS, 2, 1)
    # Iometer's transfer delay: 50 I/Os every 100 ms per worker, so 8 null jobs do not spin both CPUs
    plan.specs[0].lines = [SpecLine(4096, 100, 70, 100, 100, 50, 4096, 0)]
    endpoints = {}
    for i, m in enumerate(plan.managers):
        host, port, _ = fio_server(f"127.0.0.{2 + i}")
        m.host = f"{host}:{port}"
        endpoints[m.name] = remote_endpoint(m.name, m.host)
        for w in m.workers:
            w.targets = [Target(str(tmp_path / f"{m.name}-{w.name}.tst"))]
    db = tmp_path / "hosts.db"
    with open_store(db) as store:
        recorder = StoreRecorder(store)
        runner = prepared(
            Runner(
                plan,
                endpoints,
                recorder,
                RunOptions(
                    run_time=5,
                    engine="null",
                    status_interval=1.0,
                    decode_apart=decode_apart,
                    hosts_per_process=per_process,
                ),
            )
        )
        assert runner.run() == "complete"
        assert (runner._remote_host is not None) == bool(decode_apart)
        assert len(runner._remote_hosts) == (-(-SERVERS // per_process) if decode_apart else 0)
        step = get_run(store, recorder.run_id, raw_output=True).steps[0]
        checks = {m.name: check_manager(store, step, m.name) for m in plan.managers}
    for name, c in checks.items():
        print(
            f"\n{name}: {c.samples} samples, final IOPS {c.own.iops if c.own else 0:.0f}, "
            f"off by {c.iops_diff:.2e}, arrivals up to {c.drift_s:.2f} s behind fio's clock"
        )
        assert c.complete, f"{name}: {c.why}"
        assert c.samples >= 5  # one per second of a 5 s run (the last one may be the final report's)
        assert c.longest_s < 3.0  # no report lost (1 s each; generous for a busy machine, where fio is late)
        assert c.iops_diff <= 1e-6, name
        assert c.own.iops > 0
