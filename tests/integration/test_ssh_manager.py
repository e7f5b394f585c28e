"""An ssh:// manager end to end: the "remote host" is a network namespace made by the test, with
loopback only. Its sshd runs in inetd mode inside the namespace (the client reaches it through a
ProxyCommand), so nothing listens on any network; fio --server listens on the namespace's loopback,
which this test process cannot reach except through Fiometer's SSH forward."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from app.engine.common.ssh_address import SshAddress, parse_ssh
from app.engine.transports.ssh_manager import SSH_ENV, SshFioServer
from app.model import planfile
from app.model.plan import SpecLine, Target
from tests.fio_servers import SERVER_FIO_ENV, protocols_of, server_banner
from tests.helpers import grid, prepared

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
pytestmark = [
    pytest.mark.fio,
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create a network namespace"),
    pytest.mark.skipif(shutil.which("ip") is None, reason="needs ip (iproute2) for a network namespace"),
    pytest.mark.skipif(
        not (shutil.which("ssh") and os.path.exists(SSHD)),
        reason="needs openssh-client and openssh-server (apt-get install openssh-server)",
    ),
]


def test_ssh_addresses_are_parsed_or_refused():
    assert parse_ssh("10.0.0.5:8765") is None
    assert parse_ssh("ssh://storage1") == SshAddress("storage1")
    assert parse_ssh("ssh://admin@storage1:2222") == SshAddress("storage1", "admin", 2222)
    assert parse_ssh("ssh://[fd00::5]") == SshAddress("fd00::5")
    with pytest.raises(ValueError, match="not ssh://"):
        parse_ssh("ssh://admin@")


@pytest.fixture
def ssh_namespace(tmp_path):
    """(ssh config file, namespace name); the namespace is deleted afterwards."""
    ns = f"fiom-{uuid.uuid4().hex[:8]}"
    made = subprocess.run(["ip", "netns", "add", ns], capture_output=True, text=True)
    if made.returncode:
        pytest.skip(f"cannot create a network namespace: {made.stderr.strip()}")
    try:
        subprocess.run(["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"], check=True)
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation directory
        for key in ("host_key", "id"):
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / key)], check=True
            )
        (tmp_path / "authorized_keys").write_text((tmp_path / "id.pub").read_text())
        (tmp_path / "sshd_config").write_text(
            f"HostKey {tmp_path / 'host_key'}\nAuthorizedKeysFile {tmp_path / 'authorized_keys'}\n"
            "PermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n"
            f"PidFile {tmp_path / 'sshd.pid'}\n" + _remote_path()
        )
        (tmp_path / "ssh_config").write_text(
            "Host fiometer-remote\n"
            f"  ProxyCommand ip netns exec {ns} {SSHD} -i -f {tmp_path / 'sshd_config'}\n"
            f"  IdentityFile {tmp_path / 'id'}\n  User root\n"
            "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n"
        )
        yield tmp_path / "ssh_config", ns
    finally:
        for pid in subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split():
            with contextlib.suppress(OSError):  # processes this test started in its namespace
                os.kill(int(pid), 9)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def _remote_path() -> str:
    """The "remote host" runs ``fio`` from its PATH: with $FIOMETER_SERVER_FIO (a program named fio, e.g.
    Debian 13's in a chroot), that one's folder comes first there."""
    fio = os.environ.get(SERVER_FIO_ENV)
    if not fio:
        return ""
    assert Path(fio).name == "fio", f"{SERVER_FIO_ENV}={fio}: the ssh:// tests need a program named fio"
    return f"SetEnv PATH={Path(fio).parent}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"


def ns_fio_servers(ns: str) -> list[str]:
    pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
    out = []
    for pid in pids:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "--server=127.0.0.1" in cmd and not cmd.startswith(("sh ", "bash ")):
            out.append(cmd)
    return out


def test_ssh_server_is_reached_only_through_the_forward_and_stops_with_it(ssh_namespace):
    config, ns = ssh_namespace
    server = SshFioServer(SshAddress("fiometer-remote"), ssh=["ssh", "-F", str(config)])
    t0 = time.monotonic()
    info = server.start()
    took = time.monotonic() - t0
    try:
        assert info.fio_version.startswith("fio-") and server.local is not None
        assert ns_fio_servers(ns), "no fio --server inside the namespace"
        assert server.remote_port is not None
        with pytest.raises(OSError):  # fio listens on the namespace's loopback, not on ours
            socket.create_connection(("127.0.0.1", server.remote_port), timeout=1).close()
    finally:
        server.close()
    print(f"\nssh manager: fio --server up through SSH in {took:.1f} s")
    deadline = time.monotonic() + 10
    while ns_fio_servers(ns) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not ns_fio_servers(ns), "fio --server kept running after the SSH session ended"


def test_cli_run_with_an_ssh_manager(ssh_namespace, tmp_path):
    config, ns = ssh_namespace
    plan = grid(1, 1, 1, qd=4)
    plan.specs[0].lines = [SpecLine(4096, 100, 100, 100, 0, 1, 4096, 0)]
    plan.managers[0].host = None
    plan.managers[0].workers[0].targets = [Target("/tmp/fiometer-ssh.tst")]
    path = tmp_path / "plan.json"
    planfile.save(plan, path)
    env = {**os.environ, SSH_ENV: f"ssh -F {config}"}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "--db",
            str(tmp_path / "r.db"),
            "run",
            str(path),
            "--manager",
            "M1=ssh://fiometer-remote",
            "--run-time",
            "2",
            "--engine",
            "null",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ssh://fiometer-remote" in out.stdout and "reached over the network" not in out.stdout
    import sqlite3

    with contextlib.closing(sqlite3.connect(tmp_path / "r.db")) as db:
        ((address, protocol),) = db.execute("SELECT address, protocol FROM managers").fetchall()
    assert address == "ssh://fiometer-remote"
    assert protocol in protocols_of(server_banner()), protocol
    time.sleep(0.5)
    assert not ns_fio_servers(ns), "fio --server kept running after the run"


def test_an_ssh_session_that_died_is_opened_again_for_the_next_step_and_named_by_its_host(
    ssh_namespace, tmp_path, monkeypatch
):
    """Three steps, an SSH manager beside a local one. The SSH session is closed after step 1 (step 2 must
    open it again) and killed in the middle of step 2 (its manager fails, the message naming
    ssh://fiometer-remote, not the local forward); step 3 opens it again and completes."""
    import signal

    from app.engine.run.managers import local_endpoint, remote_endpoint
    from app.engine.run.runner import RunListener, Runner, RunOptions

    config, _ns = ssh_namespace
    monkeypatch.setenv(SSH_ENV, f"ssh -F {config}")
    plan = grid(2, 1, 1, specs=("S1", "S2", "S3"), qd=4)
    for s in plan.specs:
        s.lines = [SpecLine(4096, 100, 100, 100, 0, 1, 4096, 0)]
    for m in plan.managers:
        m.host = None
    plan.managers[0].workers[0].targets = [Target("/tmp/fiometer-ssh-steps.tst")]
    plan.managers[1].workers[0].targets = [Target(str(tmp_path / "local.tst"))]
    endpoint = remote_endpoint("M1", "ssh://fiometer-remote")
    server = endpoint.close.__self__  # the SshFioServer behind it
    forward = server.local

    class Steps(RunListener):
        def __init__(self):
            self.outcomes, self.messages, self.killed = [], [], False

        def step_finished(self, outcome):
            self.outcomes.append(outcome)
            if outcome.step.index == 0:
                server.close()  # the session ends between steps

        def samples(self, step, samples):
            if step.index == 1 and not self.killed and any(s.level == "manager" for s in samples):
                self.killed = True
                server._proc.send_signal(signal.SIGKILL)  # the session dies mid-step

        def message(self, step, message):
            self.messages.append(message.text)

    listener = Steps()
    runner = prepared(
        Runner(
            plan,
            {"M1": endpoint, "M2": local_endpoint("M2")},
            listener,
            RunOptions(run_time=3, engine="null", file_size=1 << 20),
        )
    )
    try:
        runner.run()
    finally:
        server.close()
    statuses = [o.status for o in listener.outcomes]
    assert statuses == ["complete", "partial", "complete"], (
        statuses,
        [o.finished["M1"].reason for o in listener.outcomes],
    )
    reason = listener.outcomes[1].finished["M1"].reason
    assert "ssh://fiometer-remote" in reason and f"{forward[0]}:{forward[1]}" not in reason, reason
    assert server.local == forward  # opened again on the same local port


def test_an_ssh_manager_started_beside_a_refused_one_is_closed_again(ssh_namespace, monkeypatch):
    """Start probes the managers at once: the ssh:// manager (M1) starts its fio server over SSH while M2's
    probe is refused; the run is refused naming M2, and M1's session and its fio server end."""
    from app.engine.run.managers import ManagerError, build_endpoints
    from app.engine.transports.ssh_manager import SshFioServer
    from tests.fio_servers import free_port

    config, ns = ssh_namespace
    monkeypatch.setenv(SSH_ENV, f"ssh -F {config}")
    sessions: list[subprocess.Popen] = []
    real_start = SshFioServer.start

    def start(self, *args, **kwargs):
        info = real_start(self, *args, **kwargs)
        sessions.append(self._proc)
        return info

    monkeypatch.setattr(SshFioServer, "start", start)  # to see the session it made
    plan = grid(2, 1, 1)
    plan.managers[0].host = "ssh://fiometer-remote"
    plan.managers[1].host = f"127.0.0.2:{free_port('127.0.0.2')}"
    with pytest.raises(ManagerError, match=r"^manager 'M2': nothing is listening on 127\.0\.0\.2:\d+ "):
        build_endpoints(plan)
    (ssh,) = sessions
    assert ssh.poll() is not None, "the SSH session was left open"
    deadline = time.monotonic() + 10
    while ns_fio_servers(ns) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not ns_fio_servers(ns), "fio --server kept running after its manager was refused"


def test_ssh_managers_whose_forwards_share_a_port_are_started_again(ssh_namespace, monkeypatch):
    """Two ssh:// managers started at once can be given the same free local port: the ssh that cannot bind
    it exits, but its manager may have reached the other's fio server through it first. Made to happen here
    (M2's endpoint is given M1's forward, as that race would leave it): which of the two is the real one is
    not known, so both are closed and started again, one after another, each with its own forward."""
    import dataclasses
    import threading

    import app.engine.run.managers as managers
    from app.engine.transports.fioproto import probe

    config, ns = ssh_namespace
    monkeypatch.setenv(SSH_ENV, f"ssh -F {config}")
    real = managers.ssh_endpoint
    m1_made = threading.Event()
    made: dict[str, list] = {"M1": [], "M2": []}

    def ssh_endpoint(name, address):
        ep = real(name, address)
        made[name].append(ep)
        if name == "M1":
            m1_made.set()
        elif len(made["M2"]) == 1:  # the first start of M2 ends on M1's forward
            assert m1_made.wait(60)
            ep = dataclasses.replace(ep, server=made["M1"][0].server)
        return ep

    monkeypatch.setattr(managers, "ssh_endpoint", ssh_endpoint)
    plan = grid(2, 1, 1)
    plan.managers[0].host = plan.managers[1].host = "ssh://fiometer-remote"
    endpoints = managers.build_endpoints(plan)
    try:
        assert len(made["M1"]) == 2 and len(made["M2"]) == 2
        for first in (made["M1"][0], made["M2"][0]):
            assert first.close.__self__._proc is None, "a session on the shared port was not closed"
        assert [endpoints["M1"], endpoints["M2"]] == [made["M1"][1], made["M2"][1]]
        assert endpoints["M1"].server != endpoints["M2"].server
        for ep in endpoints.values():
            assert probe(*ep.server, timeout=5).fio_version.startswith("fio-")
        deadline = time.monotonic() + 10  # the closed sessions' servers end with them
        while len(set(ns_fio_servers(ns))) > 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(set(ns_fio_servers(ns))) == 2  # (a server's connection handler shares its command line)
    finally:
        for ep in endpoints.values():
            ep.close()
