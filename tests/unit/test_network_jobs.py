"""Network workers as fio TCP jobs: who listens, who connects where, which way data flows."""

import subprocess

import pytest

from app.engine.jobs.job_policy import check_job_text
from app.engine.jobs.jobfile import JobSettings, step_jobfile, stop_order
from app.engine.jobs.network_jobs import fresh_port_base, net_failure_hint, reach_address
from app.engine.jobs.sequence import expand
from app.engine.transports.fio_binary import find_fio
from app.model import plan as P
from app.model.opening import open_plan
from app.model.validation import validate
from tests.helpers import shared_dir


def _plan(reads: int) -> P.Plan:
    spec = P.AccessSpec(
        "S", [P.SpecLine(4096, 60, reads, 0, 0, 1, 0, 0), P.SpecLine(65536, 40, reads, 0, 0, 1, 0, 0)]
    )
    server = P.Worker(
        "Net",
        kind="network_tcp",
        queue_depth=8,
        specs=["S"],
        targets=[P.Target("10.9.9.9", kind="network", partner_manager="B")],
    )
    return P.Plan("n", P.TestSetup(run_time=5), [spec], [P.Manager("A", workers=[server]), P.Manager("B")])


def _pair_texts(reads: int):
    plan = _plan(reads)
    (step,) = expand(plan)
    addresses = {"A": "127.0.0.2", "B": "127.0.0.3"}
    return [
        step_jobfile(plan, step, mi, "Linux", JobSettings(peer_addresses=addresses, net_port_base=30000))
        for mi in (0, 1)
    ]


def _options(text: str) -> dict[str, str]:
    job = text.split("[m", 1)[1].splitlines()[1:]
    return {k: v for k, _, v in (line.partition("=") for line in job if line and not line.startswith(";"))}


def test_mostly_reads_the_server_receives_so_it_listens_and_the_partner_connects_to_its_address():
    a, b = _pair_texts(reads=100)
    (step,) = expand(_plan(100))
    assert step.managers() == [0, 1] and step.workers[0].queue_depth == 1  # network workers run at depth 1
    assert "listen" in a.text.splitlines() and "rw=read" in a.text and "port=30000" in a.text
    assert "hostname=127.0.0.2" in b.text and "rw=write" in b.text and "startdelay=2" in b.text
    assert "hostname=10.9.9.9" not in b.text  # the NIC address in the file is never contacted
    assert "bssplit=4k/60:64k/40" in b.text
    assert [j.worker_key for j in b.jobs] == ["n1.w1"] and b.jobs[0].network
    for text in (a.text, b.text):
        check_job_text(text)


def test_mostly_writes_the_server_sends_so_the_partner_listens():
    a, b = _pair_texts(reads=20)
    assert "rw=write" in a.text and "hostname=127.0.0.3" in a.text and "startdelay=2" in a.text
    assert "listen" in b.text.splitlines() and "rw=read" in b.text and "hostname" not in b.text
    assert a.jobs[0].path == b.jobs[0].path == "tcp://127.0.0.3:30000"  # both name the listener


@pytest.mark.parametrize("reads", [20, 100])
def test_the_receiver_outlasts_its_sender_which_ends_by_time(reads):
    """fio's TCP sender whose receiver closed first loops for ever: the receiver's bound must cover the
    sender's start delay and run time, and the step's deadline must allow for it."""
    a, b = _pair_texts(reads)
    sender, receiver = (b, a) if reads >= 50 else (a, b)
    send, recv = _options(sender.text), _options(receiver.text)
    assert send["time_based"] == "1" and int(send["runtime"]) == 5
    assert int(recv["runtime"]) >= int(send["runtime"]) + int(send["startdelay"]) + 1
    assert receiver.tail_s == int(recv["runtime"]) - 5 and sender.tail_s == 0
    # a pass is never completed, so neither side closes and reopens its connection mid-step
    assert int(send["size"]) >= 1 << 50 and int(recv["size"]) >= 1 << 50


def test_imported_network_worker_runs_and_parses(tmp_path):
    opened = open_plan(shared_dir() / "icf" / "synthetic" / "eilerjc_iometer_network_worker.icf")
    (step,) = expand(opened.plan)
    jf = step_jobfile(opened.plan, step, 0, "Linux")
    path = tmp_path / "net.fio"
    path.write_text(jf.text)
    fio = find_fio(None)  # on Windows: fio.exe in Program Files, which parses a Linux manager's job as well
    assert subprocess.run([str(fio), "--parse-only", str(path)], capture_output=True).returncode == 0
    assert any("network worker" in n.message and "TCP" in n.message for n in opened.notes)


def test_a_fixed_port_is_used_and_automatic_ports_step_around_it():
    plan = _plan(reads=100)
    server = plan.managers[0].workers[0]
    server.targets = [
        P.Target("B1", kind="network", partner_manager="B"),
        P.Target("B2", kind="network", partner_manager="B", port=30000),
        P.Target("B3", kind="network", partner_manager="B"),
    ]
    (step,) = expand(plan)
    a = step_jobfile(plan, step, 0, "Linux", JobSettings(net_port_base=30000))
    assert [j.path.rsplit(":", 1)[1] for j in a.jobs] == ["30001", "30000", "30002"]


def test_fixed_ports_are_checked():
    plan = _plan(reads=100)
    plan.managers[0].workers[0].targets[0].port = 80
    assert any(p.path.endswith("targets[0].port") and "1024" in p.message for p in validate(plan))
    plan.managers[0].workers[0].targets[0].port = 30000
    plan.managers[1].workers = [
        P.Worker(
            "Net B",
            kind="network_tcp",
            specs=["S"],
            targets=[P.Target("A", kind="network", partner_manager="A", port=30000)],
        )
    ]
    assert any("share its connections" in p.message for p in validate(plan))


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("local", "127.0.0.1"),
        ("127.0.0.3:8765", "127.0.0.3"),
        ("[::1]:8765", "::1"),
        ("storage-01", "storage-01"),
        ("ssh://root@127.0.0.4", "127.0.0.4"),
    ],
)
def test_the_address_a_listener_is_reached_at(host, address):
    assert reach_address(host) == address


@pytest.mark.parametrize("reads", [20, 100])
def test_on_stop_the_sending_manager_goes_first(reads):
    a, b = _pair_texts(reads)
    sender, receiver = ("B", "A") if reads >= 50 else ("A", "B")
    assert stop_order({"A": a, "B": b}) == ({sender}, {receiver})
    plan = P.Plan(
        "d",
        P.TestSetup(),
        [P.AccessSpec("S")],
        [
            P.Manager(
                "C", workers=[P.Worker("W", specs=["S"], targets=[P.Target("/tmp/x.tst", "/tmp/x.tst")])]
            )
        ],
    )
    disk = step_jobfile(plan, expand(plan)[0], 0, "Linux")
    assert stop_order({"C": disk}) == (set(), set())  # no network receiver: everything stops at once


def test_automatic_ports_stay_below_the_ephemeral_ranges():
    """The listener binds every address: a port some connection or server already uses would fail its bind."""
    bases = {fresh_port_base() for _ in range(200)}
    assert min(bases) >= 1024 and max(bases) + 100 <= 32768 and len(bases) > 20


def test_a_net_engine_that_cannot_start_says_what_to_do():
    said = "fio on A exited with status 1: fio: io engine net init failed."
    assert "bind its port" in net_failure_hint(True, said) and "Network Targets tab" in net_failure_hint(
        True, said
    )
    assert net_failure_hint(False, said) == "" and net_failure_hint(True, "fio failed") == ""
