"""The arming of hosts where Fiometer cannot verify what fio opens (issue 36.2): by name, host or bare host."""

from __future__ import annotations

import pytest

from app.engine.guards import unverified


@pytest.mark.parametrize(
    ("host", "bare"),
    [
        ("10.0.0.5:8765", "10.0.0.5"),
        ("[::1]:8765", "::1"),
        ("fe80::1", "fe80::1"),
        ("ssh://box", "box"),
        ("ssh://admin@box:2222", "box"),
        ("ssh://[::1]:22", "::1"),
    ],
)
def test_a_host_is_armed_by_its_bare_name(host: str, bare: str) -> None:
    assert unverified.bare_host(host) == bare
    assert unverified.armed("M1", host, {bare}) and unverified.armed("M1", host, {"M1"})
    assert not unverified.armed("M1", host, {"ssh", "M2"})


def test_a_plain_server_is_offered_ssh_to_its_host_and_an_ssh_host_python3() -> None:
    plain = unverified.refusal("M1", "10.0.0.5:8765")
    assert "plain fio --server" in plain and "reach it as ssh://10.0.0.5," in plain
    there = unverified.refusal("M1", "ssh://admin@box:2222", "bash: python3: command not found")
    assert "plain fio --server" not in there and "reach it as" not in there
    assert "(bash: python3: command not found)" in there and "python3 3.9 or later on a Linux host" in there


def test_the_rules_sent_to_a_host_that_is_not_linux_refuse_to_hold_anything(monkeypatch) -> None:
    """fio on macOS or a BSD cannot open another process's descriptor by /proc/<pid>/fd/N: there the rules
    end at once, saying why, and the ssh:// manager counts as a plain fio server (needs the host's arming)."""
    import io

    from app.engine.remote import there as remote_there

    monkeypatch.setattr(remote_there.sys, "platform", "darwin")
    out = io.StringIO()
    with pytest.raises(SystemExit) as ended:
        remote_there.main({"mode": "place", "targets": [["/tmp/t.tst", False]]}, io.StringIO(), out)
    assert "only on Linux hosts" in str(ended.value.code) and out.getvalue() == ""
