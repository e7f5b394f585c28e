"""A fio whose protocol is newer than Fiometer's table, against real `fio --server` processes.

The installed fio speaks a protocol the table knows, so these tests hide it: the table is cut down to one
older entry with either the server's real record layout (the calibration must pass and the run decode) or
another one (the calibration must refuse, naming the fio version). Builds from the future made by
`benchmarks/build_fio_versions.sh` (`3.42+proto125`, `3.42+proto126+field`) in FIOMETER_EXTRA_FIO are run as
they are: the first decodes after calibration, the second is refused.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pytest

import app.engine.transports.fioproto.client as client
import app.engine.transports.fioproto.layouts as layouts
from app.cli.run_commands import cmd_probe
from app.engine.transports.fioproto.client import RemoteFio, probe
from app.engine.transports.fioproto.protocol_table import PROTOCOL_ROWS
from app.engine.transports.transport import Finished, Message, Snapshot, TransportError
from tests.integration.test_remote_fio import EXTRA_FIO, NULL_JOB, run_all

pytestmark = [
    pytest.mark.fio,
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed"),
]


@pytest.fixture
def table(monkeypatch):
    """``table(protocol, shape)``: Fiometer knows only ``protocol - 1``, with the field list ``shape``."""
    monkeypatch.setattr(client, "_calibrated", {})
    monkeypatch.setattr(client, "_known_protocol", {})

    def cut(protocol: int, shape: str) -> None:
        fake = layouts.Layout(protocol - 1, ("fake",), layouts.SHAPES[shape], frozenset())
        monkeypatch.setattr(layouts, "LAYOUTS", {protocol - 1: fake})
        monkeypatch.setattr(client, "LAYOUTS", {protocol - 1: fake})

    return cut


def _shape(protocol: int) -> str:
    return next(r.shape for r in PROTOCOL_ROWS if r.protocol == protocol)


def _other_shape(protocol: int) -> str:
    size = layouts.LAYOUTS[protocol].pdu_size
    return next(
        n for n, f in layouts.SHAPES.items() if layouts.Layout(0, (), f, frozenset()).pdu_size != size
    )


def test_a_newer_protocol_whose_record_calibrates_is_decoded_and_said_so(fio_server, table, capsys):
    host, port, _ = fio_server("127.0.0.22")
    real = probe(host, port)
    table(real.protocol, _shape(real.protocol))
    info = probe(host, port)
    assert (info.protocol, info.decoded_as, info.fio_version) == (
        real.protocol,
        real.protocol - 1,
        real.fio_version,
    )
    assert cmd_probe(argparse.Namespace(host=f"{host}:{port}", timeout=5.0)) == 0
    said = capsys.readouterr().out
    assert f"a calibration job decoded exactly as protocol {real.protocol - 1}" in said
    fio = RemoteFio(host, port, name="newer")
    fio.start(NULL_JOB.format(runtime=2))
    events = [e for _, e in run_all([fio])["newer"]]
    notes = [e.text for e in events if isinstance(e, Message)]
    assert any("calibration job" in n and f"protocol {real.protocol - 1}" in n for n in notes), notes
    assert isinstance(events[-1], Finished) and events[-1].ok, events[-1]
    final = [e for e in events if isinstance(e, Snapshot) and e.final][-1].jobs[0]["read"]
    assert final["total_ios"] > 1000 and final["io_bytes"] == final["total_ios"] * 4096
    assert final["runtime"] >= 1900


def test_a_newer_protocol_whose_record_differs_is_refused_with_the_fio_version(fio_server, table):
    host, port, _ = fio_server("127.0.0.23")
    real = probe(host, port)
    table(real.protocol, _other_shape(real.protocol))
    with pytest.raises(TransportError) as exc:
        probe(host, port)
    msg = str(exc.value)
    assert f"{host}:{port} runs {real.fio_version}, which speaks fio protocol {real.protocol}" in msg
    assert "calibration job did not give the numbers fio ran" in msg and "statistics record has" in msg
    assert "Run fio 3.42 (protocol 120)" in msg
    fio = RemoteFio(host, port, name="newer")
    with pytest.raises(TransportError, match="calibration job"):
        fio.start(NULL_JOB.format(runtime=1))


FUTURE = [b for b in EXTRA_FIO if "+proto" in b]


@pytest.mark.skipif(not FUTURE, reason="no fio from the future in FIOMETER_EXTRA_FIO (build_fio_versions.sh)")
@pytest.mark.parametrize("binary", FUTURE)
def test_a_fio_from_the_future(fio_server, binary):
    host, port, _ = fio_server("127.0.0.24", binary)
    if Path(binary).parent.name.endswith("+field"):
        with pytest.raises(TransportError, match="calibration job did not give the numbers"):
            probe(host, port)
        return
    info = probe(host, port)
    assert (
        info.protocol not in layouts.LAYOUTS
        and info.decoded_as == layouts.nearest_known(info.protocol).protocol
    )
    fio = RemoteFio(host, port, name="future")
    fio.start(NULL_JOB.format(runtime=2))
    events = [e for _, e in run_all([fio])["future"]]
    assert isinstance(events[-1], Finished) and events[-1].ok, events[-1]
