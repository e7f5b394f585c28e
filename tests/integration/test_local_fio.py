"""LocalFio and telemetry against the real fio 3.33 (short null-engine runs)."""

import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.engine.run.endpoint import ManagerEndpoint
from app.engine.run.runner import Runner, RunOptions
from app.engine.sampling.telemetry import StepTelemetry
from app.engine.transports.local_fio import LocalFio, _children
from app.engine.transports.transport import Finished, Message, Snapshot, TransportError
from app.model.plan import LOCAL
from tests.helpers import prepared
from tests.integration.test_remote_faults import Collect, plan_for

pytestmark = pytest.mark.fio

if shutil.which("fio") is None:
    pytest.skip("fio is not installed", allow_module_level=True)


def null_job(name: str, runtime: float, rw: str = "randread", extra: str = "") -> str:
    return (
        f"[{name}]\nioengine=null\nsize=1g\nbs=4k\nrw={rw}\nrwmixread=70\n"
        f"time_based\nruntime={runtime}\nlat_percentiles=1\n{extra}"
    )


def drain(lf: LocalFio, on_snapshot=None) -> list:
    out = []
    for ev in lf.events():
        out.append(ev)
        if isinstance(ev, Snapshot) and on_snapshot:
            on_snapshot(ev, sum(isinstance(e, Snapshot) for e in out))
    return out


def snaps(events) -> list[Snapshot]:
    return [e for e in events if isinstance(e, Snapshot)]


def texts(events) -> list[str]:
    return [e.text for e in events if isinstance(e, Message)]


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def all_gone(pids: list[int], within: float = 10.0) -> bool:
    """Whether every pid has ended, waiting up to ``within`` s: a kill is asynchronous and a loaded machine
    may take a moment to reap."""
    deadline = time.monotonic() + within
    while not all(gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return all(gone(pid) for pid in pids)


def run_one(job: str, interval: float = 0.5, **kw) -> list:
    lf = LocalFio("m", **kw)
    lf.start(job, status_interval=interval)
    return drain(lf)


# --- normal run --------------------------------------------------------------------------------------
def test_null_run_gives_interval_snapshots_then_one_final():
    events = run_one(null_job("j", 2))
    assert isinstance(events[-1], Finished)
    assert sum(isinstance(e, Finished) for e in events) == 1
    fin = events[-1]
    assert fin.ok and fin.returncode == 0 and not fin.stopped, fin
    s = snaps(events)
    assert len([x for x in s if not x.final]) >= 2
    assert [x.final for x in s].count(True) == 1 and s[-1].final
    assert s[-1].raw is not None and json.loads(s[-1].raw)["jobs"][0]["jobname"] == "j"
    assert all(x.raw is None for x in s[:-1])
    assert [x.received for x in s] == sorted(x.received for x in s)
    runtimes = [x.jobs[0]["read"]["runtime"] for x in s]
    assert runtimes == sorted(runtimes) and runtimes[-1] >= 1900


def test_whole_step_matches_fio_and_intervals_add_up():
    job = null_job("mixed", 2, "randrw") + "\n" + null_job("reads", 2)
    lf = LocalFio("m")
    lf.start(job, status_interval=0.5)
    tel = StepTelemetry({"mixed": ("m", "w1", "t1"), "reads": ("m", "w1", "t2")})
    batches = [(e, tel.update(e)) for e in lf.events() if isinstance(e, Snapshot)]
    final_snap = batches[-1][0]
    assert final_snap.final
    fio_final = {j["jobname"]: j for j in json.loads(final_snap.raw)["jobs"]}
    for name, target in (("mixed", "t1"), ("reads", "t2")):
        whole = next(s for s in batches[-1][1] if s.key == target).whole
        for dd in ("read", "write"):
            d = fio_final[name][dd]
            if d["total_ios"] == 0:
                continue
            assert getattr(whole, f"{dd}_iops") == pytest.approx(d["iops"], rel=1e-3)
            assert getattr(whole, f"{dd}_bps") == pytest.approx(d["bw_bytes"], rel=1e-3)
            assert getattr(whole, f"{dd}_lat_mean_ms") * 1e6 == pytest.approx(d["lat_ns"]["mean"], rel=1e-3)
        total = fio_final[name]["read"]["total_ios"] + fio_final[name]["write"]["total_ios"]
        summed = sum(
            s.interval.ios for _, ss in batches for s in ss if s.level == "target" and s.key == target
        )
        assert summed == pytest.approx(total, rel=0.01)
    assert tel.hist_sources == {"lat_ns"}


def _two_local_managers(tmp_path, transport=LocalFio) -> tuple[Runner, Collect]:
    """A 2-s null-engine step on two local managers, followed by the production runner (StepLoop)."""
    path = shutil.which("fio") or "fio"
    endpoints = {
        n: ManagerEndpoint(n, platform.system(), lambda n=n: transport(n, path), LOCAL, "")
        for n in ("M1", "M2")
    }
    collect = Collect()
    options = RunOptions(run_time=2, engine="null", file_size=1 << 20, status_interval=0.5)
    return prepared(Runner(plan_for(tmp_path, 2), endpoints, collect, options)), collect


def test_all_equals_the_sum_over_two_managers_running_at_once(tmp_path):
    runner, collect = _two_local_managers(tmp_path)
    assert runner.run() == "complete", [m.text for m in collect.messages]
    outcome = collect.outcomes[0]
    assert sorted(outcome.finished) == ["M1", "M2"] and all(f.ok for f in outcome.finished.values())
    finals = {name: json.loads(raw) for name, raw in outcome.raw_output.items() if raw}
    assert set(finals) == {"M1", "M2"}
    res = outcome.results
    al = res[-1]
    assert al.level == "all" and al.final
    managers = [s for s in res if s.level == "manager"]
    assert al.whole.iops == pytest.approx(sum(m.whole.iops for m in managers), rel=1e-12)
    assert al.whole.bps == pytest.approx(sum(m.whole.bps for m in managers), rel=1e-12)
    fio_iops = sum(j[dd]["iops"] for doc in finals.values() for j in doc["jobs"] for dd in ("read", "write"))
    assert al.whole.iops == pytest.approx(fio_iops, rel=1e-3)
    fio_ios = sum(
        j[dd]["total_ios"] for doc in finals.values() for j in doc["jobs"] for dd in ("read", "write")
    )
    assert al.whole.ios == fio_ios


class _BreaksAfterItsFirstReport(LocalFio):
    """Local fio whose events break after the first report, as a transport with a bug would."""

    def events(self):
        for ev in super().events():
            yield ev
            if isinstance(ev, Snapshot):
                raise ConnectionError("socket closed")


def test_a_transport_whose_events_break_fails_its_manager_and_the_step_still_ends(tmp_path):
    def transport(name: str, path: str) -> LocalFio:
        return (_BreaksAfterItsFirstReport if name == "M2" else LocalFio)(name, path)

    runner, collect = _two_local_managers(tmp_path, transport)
    runner.run()
    assert collect.outcomes[0].status == "partial", [m.text for m in collect.messages]
    finished = collect.outcomes[0].finished
    assert finished["M1"].ok, finished["M1"].reason
    assert not finished["M2"].ok and "socket closed" in finished["M2"].reason, finished["M2"].reason
    assert any(
        s.level == "manager" and s.manager == "M2" for s in collect.samples_by_step
    )  # its report counted


# --- stopping ----------------------------------------------------------------------------------------
def test_stop_mid_run_keeps_the_final_numbers():
    lf = LocalFio("m")
    lf.start(null_job("j", 30), status_interval=0.5)
    t0 = time.monotonic()
    events = drain(lf, lambda s, n: lf.stop() if n == 1 else None)
    assert time.monotonic() - t0 < 10
    fin = events[-1]
    assert fin.ok and fin.stopped and fin.returncode == 128, fin
    final = [s for s in snaps(events) if s.final]
    assert len(final) == 1 and final[0].raw
    assert final[0].jobs[0]["read"]["total_ios"] > 0
    assert final[0].jobs[0]["read"]["runtime"] < 30_000
    assert "fio is ending its jobs (signal 2)" in texts(events)


@pytest.mark.parametrize("when", [0, 2])  # before fio's first report, mid-run
def test_stop_by_trigger_file_keeps_the_final_numbers(monkeypatch, when):
    """Windows' stop (fio's --trigger-file, no signal), exercised with Linux fio: fio ends its jobs with
    its final report and exit code 0, and its job folder is left clean."""
    import app.engine.transports.local_fio as local_fio

    monkeypatch.setattr(local_fio, "stops_by_trigger_file", lambda os_name, version: True)
    monkeypatch.setattr(
        local_fio, "stop_signal", lambda os_name: int(signal.SIGWINCH)
    )  # a signal would not stop
    lf = LocalFio("m", stop_grace=8.0)
    lf.start(null_job("j", 30, extra="verify=crc32c\n"), status_interval=0.5)
    folder = lf._jobfile.parent
    if when == 0:
        lf.stop()
    t0 = time.monotonic()
    events = drain(lf, lambda _s, n: lf.stop() if n == when else None)
    assert time.monotonic() - t0 < 8
    fin = events[-1]
    assert fin.ok and fin.stopped and fin.returncode == 0, fin
    final = [s for s in snaps(events) if s.final]
    assert len(final) == 1 and final[0].jobs[0]["job_runtime"] < 30_000
    if when:
        assert final[0].jobs[0]["read"]["total_ios"] > 0
    assert not folder.exists()  # the trigger and fio's verify state files went with it


def test_fio_killed_mid_run_reports_it_and_keeps_samples():
    lf = LocalFio("m")
    lf.start(null_job("j", 30), status_interval=0.5)
    children: list[int] = []

    def kill(_s, n):
        if n == 2:
            children.extend(_children(lf.pid))
            os.kill(lf.pid, signal.SIGKILL)

    t0 = time.monotonic()
    events = drain(lf, kill)
    assert time.monotonic() - t0 < 15
    fin = events[-1]
    assert not fin.ok and fin.returncode == -9
    assert fin.reason == "fio was killed (signal 9) mid-step; samples so far are kept"
    s = snaps(events)
    assert len(s) >= 2 and not any(x.final for x in s)
    assert children, "fio runs its job in a child process"
    assert all_gone(children), "the job process outlived fio"


def test_watchdog_kills_a_fio_that_stops_reporting():
    lf = LocalFio("m", watchdog=1.5)
    lf.start(null_job("j", 30), status_interval=0.5)
    children: list[int] = []
    stopped_at: list[float] = []

    def freeze(_s, n):
        if n == 1:
            children.extend(_children(lf.pid))
            os.kill(lf.pid, signal.SIGSTOP)
            stopped_at.append(time.monotonic())

    events = drain(lf, freeze)
    fin = events[-1]
    assert not fin.ok
    assert fin.reason == "fio stopped reporting for 1.5 s and was stopped"
    assert 1.0 < time.monotonic() - stopped_at[0] < 25  # watchdog 1.5 s; the job runs 30 s
    assert gone(lf.pid)
    assert children and all_gone(children)


def test_watchdog_waits_longer_for_the_first_report():
    lf = LocalFio("m", watchdog=0.5, first_report_grace=2.0)
    lf.start(null_job("j", 30), status_interval=1.0)
    os.kill(lf.pid, signal.SIGSTOP)  # before its first report
    t0 = time.monotonic()
    events = drain(lf)
    assert 1.8 < time.monotonic() - t0 < 25  # grace 2 s; the job runs 30 s
    assert events[-1].reason == "fio printed no report within 2 s of starting and was stopped"
    assert not snaps(events) and gone(lf.pid)


def test_abort_kills_fio_now():
    lf = LocalFio("m")
    lf.start(null_job("j", 30), status_interval=0.5)
    t0 = time.monotonic()
    events = drain(lf, lambda s, n: lf.abort() if n == 1 else None)
    assert time.monotonic() - t0 < 10
    fin = events[-1]
    assert not fin.ok and "aborted" in fin.reason and gone(lf.pid)
    assert not any(s.final for s in snaps(events))


# --- errors in plain words ---------------------------------------------------------------------------
def test_directory_as_target(tmp_path):
    job = f"[d]\nioengine=psync\nfilename={tmp_path}\nsize=1m\nrw=randread\n"
    events = run_one(job)
    msg = "a target is a directory, not a file (Is a directory); give a file name inside it"
    assert msg in texts(events)
    fin = events[-1]
    assert not fin.ok and fin.returncode == 1 and msg in fin.reason


def test_target_that_cannot_be_opened(tmp_path):
    if os.geteuid() == 0:  # root ignores permissions; an immutable file still refuses writers
        target = tmp_path / "locked.dat"
        target.write_bytes(b"\0" * (1 << 20))
        if subprocess.run(["chattr", "+i", str(target)], capture_output=True).returncode != 0:
            pytest.skip("chattr +i is not available here")
        undo = ["chattr", "-i", str(target)]
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        target = locked / "t.dat"
        target.write_bytes(b"\0" * (1 << 20))
        locked.chmod(0)
        undo = ["chmod", "700", str(locked)]
    try:
        events = run_one(
            f"[w]\nioengine=psync\nfilename={target}\nsize=1m\nrw=randwrite\ntime_based\nruntime=1\n"
        )
    finally:
        subprocess.run(undo, check=True)
    opened = [t for t in texts(events) if t.startswith(f"cannot open target {target}: ")]
    assert opened, texts(events)
    fin = events[-1]
    assert not fin.ok and fin.reason == f"fio failed (exit code 1): {opened[0]}"


def test_bad_option():
    events = run_one(null_job("bad", 1, extra="bogus_option=1\n"))
    assert "fio rejected option bogus_option=1 in the job file" in texts(events)
    assert not snaps(events)
    fin = events[-1]
    assert not fin.ok and fin.returncode == 1
    assert fin.reason == "fio failed (exit code 1): fio rejected option bogus_option=1 in the job file"


def test_engine_that_cannot_be_loaded():
    events = run_one("[e]\nioengine=doesnotexist\nsize=1m\n")
    assert "fio cannot load the I/O engine doesnotexist on this machine" in texts(events)
    assert not events[-1].ok


# --- setup -------------------------------------------------------------------------------------------
def test_missing_fio_is_a_transport_error_with_install_hint(tmp_path, monkeypatch):
    monkeypatch.delenv("FIOMETER_FIO", raising=False)
    with pytest.raises(TransportError, match="apt-get install fio"):
        LocalFio("m", fio_path=tmp_path / "no-fio").start(null_job("j", 1))


def test_workdir_is_fio_cwd_and_the_job_file_is_removed(tmp_path):
    job = "[f]\nioengine=psync\nfilename=rel.dat\nsize=1m\nrw=read\n"
    events = run_one(job, workdir=tmp_path)
    assert events[-1].ok, texts(events)
    assert (tmp_path / "rel.dat").stat().st_size == 1 << 20
    assert list(tmp_path.glob("*.fio")) == []


def test_unusable_workdir_is_a_transport_error(tmp_path):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    with pytest.raises(TransportError, match="cannot write the fio job file"):
        LocalFio("m", workdir=not_a_dir).start(null_job("j", 1))


def test_fio_and_its_jobs_end_when_fiometer_dies():
    """If Fiometer dies, the parent-death signal (SIGTERM) makes fio end its jobs and exit. fio must
    not die of SIGPIPE first: its job processes (own sessions) would then run on, orphaned."""
    code = (
        "import sys, time\n"
        "from app.engine.transports.local_fio import LocalFio, _children\n"
        f"lf = LocalFio('m'); lf.start({null_job('j', 30)!r}, status_interval=0.5)\n"
        "deadline = time.monotonic() + 30\n"  # fio forks its job process; a loaded machine may take a while
        "while not _children(lf.pid) and time.monotonic() < deadline:\n"
        "    time.sleep(0.1)\n"
        "print(lf.pid, *_children(lf.pid), flush=True)\n"
        "time.sleep(60)\n"
    )
    repo = Path(__file__).resolve().parents[2]
    fiometer = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=repo)
    fio_pid, jobs = 0, []
    try:
        fio_pid, *jobs = map(int, fiometer.stdout.readline().split())
        fiometer.kill()
        fiometer.wait(5)
        assert jobs and all_gone([fio_pid, *jobs])
    finally:
        if fiometer.poll() is None:
            fiometer.kill()
        fiometer.wait(5)
        fiometer.stdout.close()
        for pid in [fio_pid, *jobs]:
            if pid and not gone(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_fio_that_ignores_stop_is_ended_after_the_grace(monkeypatch):
    """If the stop signal cannot reach fio (a console-less Windows GUI and CTRL_BREAK_EVENT), Stop still
    stops: after the grace fio is killed and the numbers of its last report are kept."""
    import app.engine.transports.local_fio as local_fio

    monkeypatch.setattr(local_fio, "stop_signal", lambda os_name: int(signal.SIGWINCH))  # fio ignores it
    lf = LocalFio("m", stop_grace=2.0)
    lf.start(null_job("j", 30), status_interval=0.5)
    t0 = time.monotonic()
    events = drain(lf, lambda _s, n: lf.stop() if n == 2 else None)
    assert time.monotonic() - t0 < 15
    fin = events[-1]
    assert not fin.ok and fin.stopped
    assert (
        fin.reason
        == "fio did not end within 2 s of Stop and was killed; the numbers of its last report are kept"
    )
    assert len(snaps(events)) >= 3  # it kept reporting after the ignored stop
