"""Network workers as fio TCP jobs: who listens, who connects where, which way data flows."""

import subprocess

from app.engine.job_policy import check_job_text
from app.engine.jobfile import step_jobfile
from app.engine.sequence import expand
from app.model import plan as P
from app.model.opening import open_plan
from tests.helpers import shared_dir


def _plan(reads: int) -> P.Plan:
    spec = P.AccessSpec("S", [P.SpecLine(4096, 60, reads, 0, 0, 1, 0, 0), P.SpecLine(65536, 40, reads, 0, 0, 1, 0, 0)])
    server = P.Worker("Net", kind="network_tcp", queue_depth=8, specs=["S"],
                      targets=[P.Target("10.9.9.9", kind="network", partner_manager="B")])
    return P.Plan("n", P.TestSetup(run_time=5), [spec], [P.Manager("A", workers=[server]), P.Manager("B")])


def test_server_listens_and_the_partner_connects_to_its_manager_address():
    plan = _plan(reads=100)
    (step,) = expand(plan)
    assert step.managers() == [0, 1] and step.workers[0].queue_depth == 1  # network workers run at depth 1
    addresses = {"A": "127.0.0.2", "B": "127.0.0.3"}
    a = step_jobfile(plan, step, 0, "Linux", peer_addresses=addresses, net_port_base=30000)
    b = step_jobfile(plan, step, 1, "Linux", peer_addresses=addresses, net_port_base=30000)
    assert "listen" in a.text.splitlines() and "rw=read" in a.text and "port=30000" in a.text
    assert "hostname=127.0.0.2" in b.text and "rw=write" in b.text and "startdelay=2" in b.text
    assert "hostname=10.9.9.9" not in b.text  # the NIC address in the file is never contacted
    assert "bssplit=4k/60:64k/40" in b.text
    assert [j.worker_key for j in b.jobs] == ["n1.w1"] and b.jobs[0].network
    for text in (a.text, b.text):
        check_job_text(text)


def test_mostly_writes_make_the_server_send():
    (step,) = expand(_plan(reads=20))
    assert "rw=write" in step_jobfile(plan := _plan(reads=20), step, 0, "Linux").text
    assert "rw=read" in step_jobfile(plan, step, 1, "Linux").text


def test_imported_network_worker_runs_and_parses(tmp_path):
    opened = open_plan(shared_dir() / "icf" / "synthetic" / "eilerjc_iometer_network_worker.icf")
    (step,) = expand(opened.plan)
    jf = step_jobfile(opened.plan, step, 0, "Linux")
    path = tmp_path / "net.fio"
    path.write_text(jf.text)
    assert subprocess.run(["fio", "--parse-only", str(path)], capture_output=True).returncode == 0
    assert any("network worker" in n.message and "TCP" in n.message for n in opened.notes)
