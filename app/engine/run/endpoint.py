"""A manager as the runner sees it: where it is, its OS (for job text) and how to get a fresh transport."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.engine.jobs.network_jobs import reach_address
from app.engine.transports.transport import Transport


@dataclass
class ManagerEndpoint:
    """How to reach one manager: its OS (for job text) and a factory for a fresh transport per step."""

    name: str
    os_name: str
    make_transport: Callable[[], Transport]
    host: str = "local"
    fio_version: str = ""
    environment: dict[str, Any] = field(default_factory=dict)  # a remote host as its probe describes it
    protocol: int | None = None  # fio's client/server protocol version (remote managers)
    close: Callable[[], None] | None = None  # ends what reaching it needed (an SSH session), after the run
    server: tuple[str, int] | None = (
        None  # a fio server's (host, port): its connection may run in a RemoteHost
    )
    # ssh:// managers: starts python3 with the rules on that host (remote.hold: Start)
    python_there: Callable[[], subprocess.Popen[str]] | None = None
    prepare: Callable[[], None] | None = (
        None  # before each step (re-opens an SSH session that died); TransportError
    )
    shown_as: str | None = (
        None  # how messages name the server when not by host:port (an SSH manager's ssh://)
    )
    fio_path: str = ""  # this machine's fio (the local manager): asked which engines it has

    @property
    def windows(self) -> bool:
        return self.os_name.lower().startswith("win")

    @property
    def address(self) -> str:
        """Where other managers reach this one (network workers connect here): its host without the port."""
        return reach_address(self.host)
