"""Fiometer's client for ``fio --server`` (an Iometer "manager"): probe, run one job file, stream events.

One TCP connection per run, as fio's own client does (a second run on the same connection
crashes the server's backend). The protocol version must match the server's exactly and the
server never announces it: it answers a wrong version with a TEXT frame whose header carries its
own version, then drops the connection. We learn the version from that frame and reconnect; the
version is remembered per host:port so later runs need no extra round trip.
"""

from __future__ import annotations

import contextlib
import logging
import select
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from app import user_settings

from ..transport import (
    ANSWERING_AGAIN,
    SENT_NOTHING,
    UNREACHABLE,
    Event,
    FioSide,
    Message,
    Snapshot,
    TransportError,
)
from .calibrate import CALIBRATION_JOB, calibration_problems
from .commands import (
    CLIENT_TYPE_CLI,
    Op,
    ProbeReply,
    job_pdu,
    jobline_pdu,
    parse_probe_reply,
    parse_text,
    probe_pdu,
)
from .decoder import RunDecoder
from .frames import HEADER_SIZE, FrameReader, Packet, ProtocolError, encode
from .layouts import LAYOUTS, Layout, UnsupportedVersion, layout_for, nearest_known, newest_release

try:  # the bytes waiting on a socket (Linux, macOS); diagnostics only
    import fcntl
    import termios

    _FIONREAD: int | None = termios.FIONREAD
except ImportError:  # Windows
    _FIONREAD = None

log = logging.getLogger(__name__)
DEFAULT_PORT = 8765
_REPORT_OPS = frozenset({Op.TS, Op.GS, Op.DU, Op.JOB_OPT, Op.STOP, Op.QUIT})
DEFAULT_PROTOCOL = 97  # fio 3.31-3.33, the first guess for a server we have not met yet
_RECV = 1 << 20  # read into one buffer per link: recv(1 MiB) allocates 1 MiB per call (2x the CPU, measured)
# A server that sends nothing at all fails after this (or 5 status intervals). Not longer: a server killed
# while its job processes run on looks the same (they keep its connection and its port open).
SILENCE_LIMIT_S = 15.0
LISTENER_CHECK_S = 5.0  # while a server is silent, how often to see whether it still accepts connections

_known_protocol: dict[tuple[str, int], int] = {}
_calibrated: dict[tuple[str, int, int], int] = {}  # (host, port, unknown protocol) -> the layout's protocol
_known_lock = threading.Lock()
CALIBRATION_TIME_S = 10.0  # the calibration job (1,024 null I/Os) once the server has accepted it


@dataclass(frozen=True)
class ServerInfo:
    """What a fio server says about itself in its PROBE reply, plus the protocol it speaks."""

    host: str
    port: int
    hostname: str
    os: str
    arch: str
    cpus: int
    fio_version: str  # e.g. "fio-3.33"
    protocol: int  # e.g. 97
    bits: int = 64
    bigendian: bool = False
    decoded_as: int | None = None  # a protocol newer than Fiometer knows: the known one that calibrated it

    @property
    def layout(self) -> Layout:
        return layout_for(self.protocol, self.decoded_as)

    @classmethod
    def from_probe(cls, host: str, port: int, protocol: int, reply: ProbeReply) -> ServerInfo:
        with _known_lock:
            decoded_as = _calibrated.get((host, port, protocol))
        return cls(
            host,
            port,
            reply.hostname,
            reply.os,
            reply.arch,
            reply.cpus,
            reply.fio_version,
            protocol,
            reply.bits,
            reply.bigendian,
            decoded_as,
        )


class _VersionMismatch(Exception):
    def __init__(self, version: int) -> None:
        super().__init__(version)
        self.version = version


def _where(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def listener_state(host: str, port: int, timeout: float) -> str:
    """What answers on host:port now: "listening" (a busy host's kernel accepts for its fio server however
    starved the server is), "refused" (the host answers but nothing listens: its fio server is gone) or
    "unreachable" (no answer: the host is down, or the link or a firewall drops what we send). (A server
    whose job processes outlived it keeps our connection open but silent.)"""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return "listening"
    except ConnectionRefusedError:
        return "refused"
    except OSError:
        return "unreachable"


def still_listening(host: str, port: int, timeout: float) -> bool:
    """Does anything still accept connections on host:port (:func:`listener_state`)?"""
    return listener_state(host, port, timeout) == "listening"


def _connect(host: str, port: int, timeout: float) -> socket.socket:
    where = _where(host, port)
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except ConnectionRefusedError:
        raise TransportError(f"nothing is listening on {where} — start `fio --server` there") from None
    except TimeoutError:
        raise TransportError(
            f"could not reach {where} within {timeout:g} s (host down or port filtered?)"
        ) from None
    except OSError as e:
        raise TransportError(f"could not connect to {where}: {e.strerror or e}") from None
    log.info("connected to %s", where)  # a failure is logged by whoever gives up on it (runner, probe)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(None)
    return sock


class _Link:
    """A connected socket with fio framing; sends are serialised so stop() may come from any thread."""

    def __init__(self, sock: socket.socket, *, verify_payload_crc: bool) -> None:
        self.sock = sock
        self.reader = FrameReader(verify_payload_crc=verify_payload_crc)
        self._rx = memoryview(bytearray(_RECV))
        self._send_lock = threading.Lock()
        self.closed = False
        self.bytes_in = 0  # everything received, partial messages included: a slow link is alive
        self.last_rx = time.monotonic()
        self.held_up = 0.0  # how long select() overran its timeout, all told: this process not given a CPU

    def send(self, data: bytes) -> bool:
        with self._send_lock:
            if self.closed:
                return False
            try:
                self.sock.sendall(data)
                return True
            except OSError:
                return False

    def pending(self) -> int | None:
        """Bytes that have reached the socket and wait to be read (None where the OS does not say)."""
        if _FIONREAD is None or self.closed:
            return None
        try:
            return int(struct.unpack("i", fcntl.ioctl(self.sock.fileno(), _FIONREAD, b"\0\0\0\0"))[0])
        except (OSError, ValueError):  # ValueError: closed by the reader meanwhile (its descriptor is -1)
            return None

    def waiting(self) -> bool:
        """Do bytes (or the end of the stream) wait on the socket, unread? Then the server is not silent,
        whatever the time since this process last read: it is this reader that is behind."""
        if self.closed:
            return False
        try:
            return bool(select.select([self.sock], [], [], 0)[0])
        except (OSError, ValueError):
            return False

    def recv(self, timeout: float) -> list[Packet] | None:
        """Packets completed by the bytes that arrive within ``timeout``; None at end of stream."""
        t0 = time.monotonic()
        ready, _, _ = select.select([self.sock], [], [], max(0.0, timeout))
        self.held_up += max(0.0, time.monotonic() - t0 - max(0.0, timeout) - 0.05)  # we were not scheduled
        if not ready:
            return []
        try:
            size = self.sock.recv_into(self._rx)
        except (ConnectionResetError, ConnectionAbortedError, BrokenPipeError, TimeoutError):
            return None
        except OSError:
            if self.closed:
                return None
            raise
        if not size:
            return None
        self.bytes_in += size
        self.last_rx = time.monotonic()
        return self.reader.feed(self._rx[:size])

    def shutdown(self) -> None:
        """Wake a reader blocked in select() and make further sends no-ops."""
        with self._send_lock:
            if self.closed:
                return
            self.closed = True
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.shutdown()
        with contextlib.suppress(OSError):
            self.sock.close()


def _handshake(
    host: str,
    port: int,
    protocol: int,
    *,
    connect_timeout: float,
    answer_timeout: float,
    verify_payload_crc: bool,
    pipelined: bytes = b"",
) -> tuple[_Link, ServerInfo, list[Packet]]:
    """Connect, PROBE with ``protocol`` (followed by ``pipelined`` frames) and wait for the reply.
    Raises _VersionMismatch with the server's version if it speaks another one."""
    where = _where(host, port)
    link = _Link(_connect(host, port, connect_timeout), verify_payload_crc=verify_payload_crc)
    ok = False
    try:
        link.send(encode(protocol, Op.PROBE, probe_pdu(), tag=1) + pipelined)
        deadline = time.monotonic() + answer_timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TransportError(
                    f"{where} accepted the connection but did not answer like a fio server within "
                    f"{answer_timeout:g} s — is `fio --server` running there?"
                )
            try:
                packets = link.recv(min(left, 0.5))
            except (ProtocolError, OSError):
                raise TransportError(
                    f"{where} answered, but not in fio's protocol — is it `fio --server`?"
                ) from None
            if packets is None:
                raise TransportError(
                    f"{where} closed the connection without answering — is it `fio --server`?"
                )
            for i, pkt in enumerate(packets):
                if pkt.version != protocol:
                    raise _VersionMismatch(pkt.version)
                if pkt.opcode == Op.TEXT and "bad server cmd version" in parse_text(pkt.payload).text:
                    raise _VersionMismatch(pkt.version)
                if pkt.opcode == Op.PROBE:
                    info = ServerInfo.from_probe(
                        host, port, protocol, parse_probe_reply(pkt.payload, protocol)
                    )
                    ok = True
                    return link, info, packets[i + 1 :]
    finally:
        if not ok:
            link.close()


def _open(
    host: str,
    port: int,
    *,
    connect_timeout: float,
    answer_timeout: float,
    verify_payload_crc: bool,
    after_probe: Callable[[int], bytes] | None = None,
) -> tuple[_Link, ServerInfo, list[Packet]]:
    """Handshake with version discovery; ``after_probe(protocol)`` is pipelined behind the PROBE.

    Pipelining is safe even with a guessed version: fio checks the version of the first frame
    and hangs up before parsing anything else. It also saves the idle server's ~1 s reaction time.
    """
    key = (host, port)
    with _known_lock:
        known = _known_protocol.get(key)
    saved = user_settings.saved_protocol(_where(host, port)) if known is None else known
    protocol = known or saved or DEFAULT_PROTOCOL
    timeouts = {"connect_timeout": connect_timeout, "answer_timeout": answer_timeout}
    for _ in range(3):
        if protocol not in LAYOUTS:
            _calibrate(host, port, protocol, verify_payload_crc=verify_payload_crc, **timeouts)
        try:
            link, info, rest = _handshake(
                host,
                port,
                protocol,
                connect_timeout=connect_timeout,
                answer_timeout=answer_timeout,
                verify_payload_crc=verify_payload_crc,
                pipelined=after_probe(protocol) if after_probe else b"",
            )
        except _VersionMismatch as e:
            log.info("%s: speaks protocol %d, not %d", _where(host, port), e.version, protocol)
            if e.version < min(LAYOUTS):
                runs = _fio_version_at(host, port, e.version, min(connect_timeout, 2.0), verify_payload_crc)
                raise TransportError(f"{_where(host, port)}{runs}: {UnsupportedVersion(e.version)}") from None
            protocol = e.version
            with _known_lock:
                _known_protocol[key] = protocol
            continue
        with _known_lock:
            _known_protocol[key] = protocol
        if protocol != saved:  # learnt here (a rejected guess) or not yet kept: the next process needs it too
            user_settings.remember_protocol(_where(host, port), protocol)
        log.info(
            "%s: protocol %d, %s on %s (%s)",
            _where(host, port),
            protocol,
            info.fio_version,
            info.hostname,
            info.os,
        )
        return link, info, rest
    log.warning("%s: keeps changing its protocol version", _where(host, port))
    raise TransportError(f"{_where(host, port)} keeps changing its protocol version; giving up")


def _fio_version_at(host: str, port: int, protocol: int, timeout: float, verify_payload_crc: bool) -> str:
    """' (fio-3.30)' from a PROBE at the server's own protocol (that reply has kept its form), or ''."""
    try:
        link, info, _ = _handshake(
            host,
            port,
            protocol,
            connect_timeout=timeout,
            answer_timeout=timeout,
            verify_payload_crc=verify_payload_crc,
        )
    except (TransportError, _VersionMismatch, ProtocolError, OSError, ValueError):
        return ""
    link.close()
    return f" ({info.fio_version})"


def _calibrate(
    host: str,
    port: int,
    protocol: int,
    *,
    connect_timeout: float,
    answer_timeout: float,
    verify_payload_crc: bool,
) -> None:
    """A server speaking a protocol newer than any layout here: run the calibration job at that protocol and
    decode its final record with the nearest older layout; keep that layout for the server if every check
    holds (calibrate.py), else refuse with what differed and what to do."""
    with _known_lock:
        if (host, port, protocol) in _calibrated:
            return
    where, base = _where(host, port), nearest_known(protocol)
    frames = encode(protocol, Op.JOBLINE, jobline_pdu(["fio", "--output-format=json+"], CLIENT_TYPE_CLI))
    frames += encode(protocol, Op.JOB, job_pdu(CALIBRATION_JOB, CLIENT_TYPE_CLI))
    link, info, rest = _handshake(
        host,
        port,
        protocol,
        connect_timeout=connect_timeout,
        answer_timeout=answer_timeout,
        verify_payload_crc=verify_payload_crc,
        pipelined=frames,
    )
    try:
        record, texts = _calibration_record(link, protocol, rest, answer_timeout + CALIBRATION_TIME_S)
    finally:
        with contextlib.suppress(OSError):
            link.send(encode(protocol, Op.QUIT))
        link.close()
    problems = calibration_problems(record, base) if record is not None else []
    if record is None:
        problems = [f"the calibration job sent no statistics ({'; '.join(texts) or 'no answer'})"]
    if problems:
        log.warning("%s: protocol %d does not decode as %d: %s", where, protocol, base.protocol, problems)
        raise TransportError(
            f"{where} runs {info.fio_version}, which speaks fio protocol {protocol}, newer than any this Fiometer "
            f"knows (up to {max(LAYOUTS)}); decoded as protocol {base.protocol}, the nearest, a calibration job "
            f"did not give the numbers fio ran ({'; '.join(problems[:3])}). Run {newest_release()} or another "
            f"release from fio 3.31 on there, or a Fiometer that knows protocol {protocol}."
        )
    log.info(
        "%s: %s speaks protocol %d; calibrated: decodes as protocol %d",
        where,
        info.fio_version,
        protocol,
        base.protocol,
    )
    with _known_lock:
        _calibrated[(host, port, protocol)] = base.protocol


def _calibration_record(
    link: _Link, protocol: int, packets: list[Packet], limit: float
) -> tuple[bytes | None, list[str]]:
    """Run the loaded calibration job (RUN once fio accepted it) and return its last TS payload and fio's texts."""
    starts, record, texts = 0, None, []
    deadline = time.monotonic() + limit
    while True:
        for pkt in packets:
            if pkt.opcode == Op.START:
                starts += 1
                if starts == 2:
                    link.send(encode(protocol, Op.RUN))
            elif pkt.opcode == Op.TS:
                record = pkt.payload
            elif pkt.opcode == Op.TEXT:
                texts.append(parse_text(pkt.payload).text.strip())
            elif pkt.opcode in (Op.STOP, Op.QUIT):
                return record, texts
        left = deadline - time.monotonic()
        if left <= 0:
            return record, [*texts, f"no end within {limit:g} s"]
        try:
            got = link.recv(min(left, 0.5))
        except (ProtocolError, OSError):
            got = None
        if got is None:
            return record, texts
        packets = got


def probe(host: str, port: int = DEFAULT_PORT, timeout: float = 5.0) -> ServerInfo:
    """Ask a fio server who it is. Raises TransportError with a plain message if it cannot."""
    link, info, _ = _open(
        host, port, connect_timeout=timeout, answer_timeout=timeout, verify_payload_crc=True
    )
    link.close()
    return info


def forget_protocol(host: str, port: int = DEFAULT_PORT) -> None:
    """Drop the remembered protocol version of a server (e.g. after it was upgraded)."""
    with _known_lock:
        _known_protocol.pop((host, port), None)
    user_settings.forget_protocol(_where(host, port))


# An idle server's connection handler looks at its socket once a second, counted from its last
# reply (fio's server.c waits up to 1000 ms on its send queue while no job runs). A RUN that
# arrives just before one handler's look and just after another's starts those two jobs ~1 s
# apart; sending it mid-way between their looks starts them at the same look.
SERVER_IDLE_WAKE = 1.0
_WAKE_MARGIN = 0.15


def run_delay(loaded_at: list[float], now: float) -> float:
    """How long to wait before sending RUN to servers whose job files were accepted (their last
    reply) at ``loaded_at`` (monotonic), so that no server is about to look at its socket."""
    for step in range(100):
        d = step * SERVER_IDLE_WAKE / 100
        phases = [((now + d - t) % SERVER_IDLE_WAKE) for t in loaded_at]
        if all(_WAKE_MARGIN <= p <= SERVER_IDLE_WAKE - _WAKE_MARGIN for p in phases):
            return d
    return 0.0


def status_interval_arg(seconds: float) -> str:
    if seconds <= 0:
        raise ValueError("status interval must be positive")
    ms = round(seconds * 1000)
    return f"--status-interval={ms // 1000}" if ms % 1000 == 0 else f"--status-interval={ms}ms"


_NO_EVENTS: tuple[Event, ...] = ()  # "nothing happened", without an allocation per read


@dataclass(slots=True)
class _Watch:
    """The silence watch threaded through one run's event loop: the limits, the next ETA poll, and what
    has been said about a silence so far."""

    silence: float  # no byte for this long: the server is given up on
    note: float  # no byte for this long: a warning, and the listener checks begin
    eta_frame: bytes
    next_eta: float  # time.monotonic() of the next ETA poll
    quiet_from: float | None = None  # the last byte before a silence that was reported
    listener_check: float = 0.0  # when next to check that a silent server still accepts connections
    unreachable_said: bool = False


class RemoteFio:
    """A :class:`~app.engine.transports.transport.Transport` that runs one job file on a ``fio --server``.

    ``start`` connects, checks the server and loads the job (blocking until fio has accepted the
    job file: at most about ``connect_timeout + 2 * answer_timeout``); ``go`` then sends RUN, so a
    runner can load every manager first and start them all at once (``events`` sends RUN itself
    if ``go`` was not called). ``events`` yields one Snapshot per status report (all jobs of that
    report, cumulative, in fio's JSON job shape), Messages for server text, and exactly one Finished.

    Watchdogs: ``answer_timeout`` for the handshake; when no byte arrives for ``silence_note``
    seconds (default 3 status intervals + 5 s) a warning says so and how long the client waits, and
    the run fails with a plain reason once the silence lasts ``silence_timeout`` seconds (default
    the larger of ``SILENCE_LIMIT_S`` and 5 status intervals): a busy server (its host short of
    CPU) is late, not dead, and one that comes back says so; a server that is gone ends the
    connection and fails at once; a host that is down fails at the warning: from then on, every
    ``LISTENER_CHECK_S``, the client checks that the server's port still accepts connections
    (:func:`still_listening`; fio's job processes keep it open if they outlive their server, so a
    server killed that way fails at ``silence_timeout``). A server whose jobs are stuck
    still answers its ETA polls, which the runner's progress rule catches
    (:mod:`app.engine.run.step_watch`). Bytes, not
    whole messages, count: one report is ~184 KB per job, so on a slow link a message can take
    many seconds to arrive while the manager is well. The client polls the server's ETA every
    ``eta_poll`` s, which a live server answers within about a second even when idle;
    ``stop_timeout`` bounds the wait for final numbers after stop(). Whether fio itself makes
    progress, and the step's deadline, are the runner's business (:mod:`app.engine.run.step_watch`).
    Server text goes through a :class:`~app.engine.common.message_gate.MessageGate`.

    ``verify_payload_crc`` checks fio's CRC16 of every payload fragment too. It is off by default:
    TCP already checksums the stream, the pure-Python check costs about 1.5 ms per job per
    report, and header CRCs, which guard the framing itself, are always verified.
    """

    def __init__(
        self,
        host: str,
        port: int = DEFAULT_PORT,
        *,
        name: str | None = None,
        connect_timeout: float = 5.0,
        answer_timeout: float = 5.0,
        silence_timeout: float | None = None,
        silence_note: float | None = None,
        stop_timeout: float = 15.0,
        settle: float = 0.25,
        eta_poll: float = 1.0,
        verify_payload_crc: bool = False,
        shown_as: str | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.shown_as = (
            shown_as  # how messages name the server (an SSH manager's ssh://host, not its forward)
        )
        self.name = name or _where(host, port)
        self.connect_timeout = connect_timeout
        self.answer_timeout = answer_timeout
        self.silence_timeout = silence_timeout
        self.silence_note = silence_note
        self.stop_timeout = stop_timeout
        self.settle = settle
        self.eta_poll = eta_poll
        self.verify_payload_crc = verify_payload_crc
        self.info: ServerInfo | None = None
        self._link: _Link | None = None
        self._session: RunDecoder | None = None
        self._early: list[Event] = []
        self._interval = 1.0
        self._stop_at: float | None = None
        self._aborted = threading.Event()
        self._started = False
        self._run_sent = False
        self.run_sent_at: float | None = None  # time.time() when RUN went out
        self._other_bytes = 0
        self._report_bytes = 0  # bytes_received, set once per batch of received bytes (a consistent value)
        self.loaded_at: float | None = None  # time.monotonic() when fio accepted the job file
        self.report_at: float | None = None  # time.monotonic() when the newest report arrived (at the socket)
        self.fio_clock_s: float | None = None  # the newest report's job runtime on fio's own clock (s)

    @property
    def bytes_received(self) -> int:
        """Bytes received that may belong to fio's reports, partial ones included: everything but
        complete ETA replies and text. It grows while a report is on its way over a slow link, and
        not while a stuck server only answers ETA polls or sends text. Where the OS tells, bytes that
        reached the socket but wait unread count too (this reader behind is no sign of the server)."""
        link = self._link
        waiting = link.pending() if link is not None and self._reader_behind(link) else None
        return self._report_bytes + (waiting or 0)

    @property
    def last_heard(self) -> float | None:
        """When (time.monotonic()) the last byte of any kind arrived (reports, ETA replies, text);
        counted from RUN. None before the connection. Where the OS tells how many bytes wait unread on
        the socket (and so also counts them in ``bytes_received``), bytes waiting mean: heard now."""
        link = self._link
        if link is None:
            return None
        if self._reader_behind(link) and link.pending():
            return time.monotonic()
        return link.last_rx

    def _reader_behind(self, link: _Link) -> bool:
        """This process has not read for a status interval (cheap test first: no system call)."""
        return time.monotonic() - link.last_rx >= self._interval

    @property
    def job_started_at(self) -> float | None:
        """When fio started the job (time.time() seconds): fio's own job_start where the protocol
        carries it (fio 3.36+), else when its first SERVER_START arrived."""
        return self._session.job_started_at if self._session is not None else None

    # --- Transport -----------------------------------------------------------------------

    def start(self, job_text: str, *, status_interval: float = 1.0) -> None:
        if self._started:
            raise RuntimeError("RemoteFio runs one job file; make a new one per run")
        self._started = True
        self._interval = status_interval
        args = ["fio", status_interval_arg(status_interval), "--output-format=json+"]

        # RUN is sent only once the server has accepted the job file (its second START): when fio
        # rejects a job it hangs up at once, and unread RUN bytes would make that a TCP reset that
        # can swallow the error text it just sent.
        def job_frames(protocol: int) -> bytes:
            return encode(protocol, Op.JOBLINE, jobline_pdu(args, CLIENT_TYPE_CLI)) + encode(
                protocol, Op.JOB, job_pdu(job_text, CLIENT_TYPE_CLI)
            )

        try:
            link, info, rest = _open(
                self.host,
                self.port,
                connect_timeout=self.connect_timeout,
                answer_timeout=self.answer_timeout,
                verify_payload_crc=self.verify_payload_crc,
                after_probe=job_frames,
            )
        except TransportError as e:
            if not self.shown_as:
                raise
            raise TransportError(str(e).replace(_where(self.host, self.port), self.shown_as)) from None
        self._link, self.info = link, info
        if info.decoded_as is not None:
            self._early.append(
                Message(
                    self.name,
                    f"{self.shown_as or _where(self.host, self.port)} runs {info.fio_version} (fio protocol "
                    f"{info.protocol}, newer than this Fiometer knows); its statistics passed a calibration job "
                    f"decoded as protocol {info.decoded_as}, so they are read that way",
                    "warning",
                )
            )
        session = self._session = RunDecoder(
            self.name,
            info.layout,
            self.host,
            self.port,
            settle=self.settle,
            fio_version=info.fio_version,
            shown_as=self.shown_as,
        )
        for pkt in rest:
            self._early += session.on_packet(pkt)
        self._load(link, session)

    def _load(self, link: _Link, session: RunDecoder) -> None:
        """Wait until fio has accepted the job file (or rejected it: events() then says why)."""
        deadline = time.monotonic() + self.answer_timeout
        while session.starts < 2 and not session.finished and not self._aborted.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                link.send(encode(session.layout.protocol, Op.QUIT))
                link.close()
                raise TransportError(
                    f"{session.where} did not accept the job file within {self.answer_timeout:g} s"
                )
            try:
                packets = link.recv(min(left, 0.5))
            except (ProtocolError, OSError):
                packets = None
            if packets is None:
                self._early += session.on_disconnect()
                return
            for pkt in packets:
                self._early += session.on_packet(pkt)
        if session.starts >= 2:
            self.loaded_at = time.monotonic()

    def go(self) -> None:
        """Start the loaded job now (RUN); events() sends it itself if this is never called."""
        link, session = self._link, self._session
        if link is None or session is None or session.finished or self._run_sent or self._stop_at is not None:
            return
        if session.starts >= 2 and not self._aborted.is_set():
            self._run_sent = True
            link.send(encode(session.layout.protocol, Op.RUN))
            self.run_sent_at = time.time()
            link.last_rx = time.monotonic()  # silence is counted from RUN

    @property
    def dropped_note(self) -> str | None:
        """What the server's text flood cost: how many messages were not kept, or None."""
        return self._session.gate.summary(self._session.where) if self._session is not None else None

    def events(self) -> Iterator[Event]:
        return self._noted(self._events())

    def _events(self) -> Iterator[Event]:
        link, session = self._link_and_session()
        watch = self._new_watch(session)
        try:
            yield from self._early
            self._early = []
            while not session.finished:
                yield from self._before_recv(session)
                if session.finished:
                    break
                try:
                    packets = link.recv(self._wait(link, session, watch))
                except ProtocolError as e:
                    yield from session.on_error(
                        f"garbled data from manager {session.where} ({e}); samples so far kept"
                    )
                    break
                except OSError:
                    packets = None
                if packets is None:
                    if not self._aborted.is_set():
                        yield from session.on_disconnect()
                    continue
                if watch.quiet_from is not None and link.last_rx > watch.quiet_from:
                    yield self._answering_again(session, watch, link.last_rx - watch.quiet_from)
                self._count(link, packets)
                for pkt in packets:
                    yield from session.on_packet(pkt)
                    if session.finished:
                        break
                if session.finished:
                    break
                if self._run_due(session):
                    continue  # send RUN (or give up on it) right away, at the top of the loop
                yield from session.on_tick()
                yield from self._watch_silence(link, session, watch)
        finally:
            if not session.ended_by_server:
                # silence, garbled data, abort, or the caller stopped iterating: make sure the job
                # does not keep running on the server (closing the socket alone may not stop it)
                link.send(encode(session.layout.protocol, Op.QUIT))
            link.close()

    def _link_and_session(self) -> tuple[_Link, RunDecoder]:
        link, session = self._link, self._session
        if link is None or session is None:
            raise RuntimeError("start() first")
        return link, session

    def _new_watch(self, session: RunDecoder) -> _Watch:
        silence = (
            self.silence_timeout
            if self.silence_timeout is not None
            else max(SILENCE_LIMIT_S, 5 * self._interval)
        )
        note = self.silence_note if self.silence_note is not None else 3 * self._interval + 5.0
        eta_frame = encode(session.layout.protocol, Op.SEND_ETA, tag=2)
        return _Watch(silence, note, eta_frame, time.monotonic() + self.eta_poll)

    def _before_recv(self, session: RunDecoder) -> Sequence[Event]:
        """An abort, or a stop before RUN, ends the session here; else RUN goes out once fio has the job."""
        if self._aborted.is_set():
            return session.on_abort()
        if not self._run_sent and self._stop_at is not None:
            return session.on_stopped_before_run()  # never send RUN after a stop
        if not self._run_sent and session.starts >= 2:  # START for JOBLINE, then for the JOB
            self.go()
        return _NO_EVENTS

    def _run_due(self, session: RunDecoder) -> bool:
        """RUN is still to be sent, or given up on, now."""
        return not self._run_sent and (self._stop_at is not None or session.starts >= 2)

    def _wait(self, link: _Link, session: RunDecoder, watch: _Watch) -> float:
        """How long the next read may wait: until the next ETA poll, silence verdict, report or stop deadline."""
        now = time.monotonic()
        wait = min(watch.next_eta, link.last_rx + watch.silence) - now
        if watch.quiet_from is None and self._run_sent:
            wait = min(wait, link.last_rx + watch.note - now)
        for deadline in (session.next_deadline(), self._stop_at):
            if deadline is not None:
                wait = min(wait, deadline - now)
        return min(max(wait, 0.0), 0.5)

    def _answering_again(self, session: RunDecoder, watch: _Watch, quiet: float) -> Message:
        watch.quiet_from, watch.unreachable_said = None, False
        return Message(
            session.manager,
            f"manager {session.where} is answering again after {quiet:.0f} s of silence",
            "info",
            ANSWERING_AGAIN,
        )

    def _count(self, link: _Link, packets: list[Packet]) -> None:
        # the whole batch is counted before any event is handed out: another thread reading
        # bytes_received meanwhile must not see text bytes as report bytes
        self._other_bytes += sum(HEADER_SIZE + len(p.payload) for p in packets if p.opcode not in _REPORT_OPS)
        self._report_bytes = link.bytes_in - self._other_bytes

    def _watch_silence(self, link: _Link, session: RunDecoder, watch: _Watch) -> Sequence[Event]:
        """After a read: the server's silence judged (noted, checked on, or the end of it), the stop's
        deadline kept, or the next ETA poll sent."""
        now = time.monotonic()
        quiet = now - link.last_rx
        if quiet >= self._interval and link.waiting():
            pass  # bytes wait on the socket: not the server's silence, this reader is behind; read on
        elif quiet >= watch.silence:
            self._log_silence(link, now)
            return session.on_silence(quiet)
        elif (
            watch.quiet_from is None and watch.note < watch.silence and quiet >= watch.note and self._run_sent
        ):
            watch.quiet_from, watch.listener_check = link.last_rx, now
            self._log_silence(link, now)
            return [
                Message(
                    session.manager,
                    f"manager {session.where} has sent nothing for "
                    f"{quiet:.0f} s (its host busy, or frozen?); waiting up "
                    f"to {watch.silence:g} s before giving up on it",
                    "warning",
                    SENT_NOTHING,
                )
            ]
        elif watch.quiet_from is not None and now >= watch.listener_check:
            watch.listener_check = now + LISTENER_CHECK_S
            return self._check_listener(link, session, watch)
        elif self._stop_at is not None and now >= self._stop_at and quiet >= self._interval:
            # (data still arriving on a slow link may be the final report; the runner caps the wait)
            return session.on_error(
                f"manager {session.where} did not finish within {self.stop_timeout:g} s of the stop request; "
                "samples so far kept"
            )
        elif now >= watch.next_eta and self._stop_at is None:  # (no polls while stopping: bytes mean data)
            link.send(watch.eta_frame)  # keepalive: a live server answers with ETA
            watch.next_eta = now + self.eta_poll
        return _NO_EVENTS

    def _check_listener(self, link: _Link, session: RunDecoder, watch: _Watch) -> Sequence[Event]:
        """A silent server: does its port still accept connections (else it is gone), is its host reachable?"""
        state = listener_state(self.host, self.port, self.connect_timeout)
        if state == "refused":  # the host answers: its fio server is no more
            gone = (
                "its SSH session (the forward to it) ended"
                if (self.shown_as or "").startswith("ssh://")
                else "its port no longer accepts connections: its fio server is gone"
            )
            return session.on_error(
                f"manager {session.where} sent nothing for {time.monotonic() - link.last_rx:.0f} s and "
                f"{gone}; samples so far kept"
            )
        if state == "unreachable" and not watch.unreachable_said:  # down, or only the link: wait on
            watch.unreachable_said = True
            return [
                Message(
                    session.manager,
                    f"manager {session.where} is unreachable (its host does not "
                    "answer: down, or the link?); waiting up to "
                    f"{watch.silence:g} s for it",
                    "warning",
                    UNREACHABLE,
                )
            ]
        return _NO_EVENTS

    @property
    def ended(self) -> bool:
        """The server's part is over (its final numbers or its end are decoded), whatever is still on its way
        to the caller."""
        return self._session is not None and self._session.finished

    def _log_silence(self, link: _Link, now: float) -> None:
        """Whose silence: the server's, or ours (this process not scheduled, bytes waiting unread)?"""
        log.warning(
            "%s: nothing read for %.1f s; this reader was held up %.1f s in all so far; %s bytes wait "
            "unread on the socket",
            self.name,
            now - link.last_rx,
            link.held_up,
            link.pending(),
        )

    @property
    def unread(self) -> bool:
        """This reader is behind: it has not read for a status interval and bytes wait on the socket (the
        server may even be blocked, its sends waiting for our reads): no verdict on the server now."""
        link = self._link
        return link is not None and not self.ended and self._reader_behind(link) and link.waiting()

    @property
    def fio_side(self) -> FioSide:
        """(report_at, fio_clock_s, ended, unread): where the server is, apart from the events still queued."""
        return self.report_at, self.fio_clock_s, self.ended, self.unread

    def _noted(self, events: Iterable[Event]) -> Iterator[Event]:
        """Pass events on, noting each report's arrival and fio's clock in it first: whoever judges
        liveness reads these (from another thread or process) without waiting for the events' queue."""
        for ev in events:
            if isinstance(ev, Snapshot):
                ms = [int(j.get("job_runtime") or 0) for j in ev.jobs if j.get("job_runtime") is not None]
                if ms:
                    self.fio_clock_s = max(ms) / 1000.0
                self.report_at = ev.received
            yield ev

    def stop(self) -> None:
        """Graceful stop: fio ends its jobs and still sends its final numbers."""
        link, session = self._link, self._session
        if link is None or session is None or session.finished:
            return
        session.stop_requested = True
        if self._stop_at is None:
            self._stop_at = time.monotonic() + self.stop_timeout
            link.send(encode(session.layout.protocol, Op.QUIT))

    def abort(self) -> None:
        """Hard stop: ask the server to end the job, drop the connection, do not wait for numbers."""
        self._aborted.set()
        link, session = self._link, self._session
        if link is not None and session is not None:
            link.send(encode(session.layout.protocol, Op.QUIT))
            link.shutdown()
