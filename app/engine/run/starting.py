"""A step's managers started together: every job loaded first (remote ones in parallel), then all told to go
at once; and each transport's events read onto the step's queue."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

from app.engine.devices.disks import disk_of
from app.engine.guards.held_targets import Held
from app.engine.jobs.jobfile import JobFile
from app.engine.run.endpoint import ManagerEndpoint
from app.engine.run.managers import TransportPool
from app.engine.transports.transport import (
    Event,
    Finished,
    Startable,
    TakesDescriptors,
    Transport,
    TransportError,
)

log = logging.getLogger(__name__)


class Starter:
    """Starts a step's managers. ``started(name, transport)`` is told of each manager as it goes (the runner
    keeps it, to stop it)."""

    def __init__(
        self,
        endpoints: dict[str, ManagerEndpoint],
        pool: TransportPool,
        status_interval: float,
        started: Callable[[str, Transport], None],
    ) -> None:
        self.endpoints = endpoints
        self.pool = pool
        self.status_interval = status_interval
        self.started = started

    def start_together(
        self, files: dict[str, JobFile], finished: dict[str, Finished], held: dict[str, Held] | None = None
    ) -> dict[str, Transport]:
        """Load every manager's job first (remote ones in parallel), then start them all at once:
        RUN to the fio servers, then the local fio processes (which start when launched). Managers in
        ``held`` get its job text and descriptors; those that could not start go to ``finished``."""
        held = held or {}
        texts = {n: held[n].text if n in held else jf.text for n, jf in files.items()}
        transports = self.make_transports(files)
        for name, h in held.items():
            t = transports.get(name)
            if isinstance(t, TakesDescriptors):
                t.pass_fds = tuple(h.fds.values())
                t.disks = tuple(dict.fromkeys(d for p in h.fds if (d := disk_of(p))))
        errors = self._prepare_endpoints(files)
        self._load(
            {n: t for n, t in transports.items() if isinstance(t, Startable) and n not in errors},
            texts,
            errors,
        )
        for name, transport in transports.items():
            if name not in errors:
                self._launch(name, transport, texts[name], errors)
        for name, reason in errors.items():
            log.warning("manager %s could not start: %s", name, reason)
            finished[name] = Finished(name, False, reason)
            transports.pop(name)
        return transports

    def make_transports(self, files: dict[str, JobFile]) -> dict[str, Transport]:
        """A fresh transport per manager of the step (``managers.TransportPool``)."""
        return self.pool.make({name: self.endpoints[name] for name in files})

    def _prepare_endpoints(self, files: dict[str, JobFile]) -> dict[str, str]:
        """Each endpoint's preparation for a step (re-opening an SSH session); why it failed, by manager.
        (Here, not in the loaders: an SSH process dies with the thread that started it.)"""
        errors: dict[str, str] = {}
        for name in files:
            prepare = self.endpoints[name].prepare
            if prepare is not None:
                try:
                    prepare()
                except TransportError as e:
                    errors[name] = str(e)
        return errors

    def _load(self, startable: dict[str, Startable], texts: dict[str, str], errors: dict[str, str]) -> None:
        """Load the two-phase managers' jobs in parallel, then wait as the pool says before they go."""

        def load(name: str, transport: Startable) -> None:
            try:
                transport.start(texts[name], status_interval=self.status_interval)
            except TransportError as e:
                errors[name] = str(e)

        loaders = [
            threading.Thread(target=load, args=item, daemon=True, name=f"fiometer-load-{item[0]}")
            for item in startable.items()
        ]
        for th in loaders:
            th.start()
        for th in loaders:
            th.join()
        loaded = [at for n, t in startable.items() if n not in errors and (at := t.loaded_at) is not None]
        time.sleep(self.pool.go_delay(loaded, time.monotonic()))

    def _launch(self, name: str, transport: Transport, text: str, errors: dict[str, str]) -> None:
        """Start one manager: a loaded one goes; another is started now (a local fio, which runs at once)."""
        if isinstance(transport, Startable):
            transport.go()
        else:
            try:
                transport.start(text, status_interval=self.status_interval)
            except TransportError as e:
                errors[name] = str(e)
                return
        self.started(name, transport)


def pump(name: str, transport: Transport, out: queue.Queue[tuple[str, Event]]) -> None:
    """A transport's events onto ``out`` until it has finished (a thread per transport that does not push)."""
    try:
        for ev in transport.events():
            out.put((name, ev))
            if isinstance(ev, Finished):
                return
    except Exception as e:  # a transport bug must not hang the step
        out.put((name, Finished(name, False, f"internal error reading manager {name!r}: {e}")))
        return
    out.put((name, Finished(name, False, f"manager {name!r} ended without a result")))
