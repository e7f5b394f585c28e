"""Which fio I/O engine a manager's jobs run on: the plan's choice (``TestSetup.engine``), with ``auto``
resolved per manager, and the io_uring options that go with it.

``auto`` is the best engine the manager is known to have: io_uring on a local Linux host whose kernel and fio
allow it (app.engine.devices.io_uring_host), libaio on other Linux hosts (a remote fio server does not say
what its kernel allows; choose io_uring to use it there), windowsaio on Windows, posixaio on macOS. An explicit
choice the manager cannot run is refused before the run starts, naming the manager and what to choose.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.engine.jobs import targets as T
from app.model.plan import AUTO_ENGINE, TestSetup

IO_URING = "io_uring"
# the engines each OS's fio has for Fiometer's jobs, the first the one "auto" falls back to
BY_OS = {
    T.LINUX: ("libaio", IO_URING, "posixaio", "psync"),
    T.WINDOWS: ("windowsaio", "psync"),
    T.MACOS: ("posixaio", "psync"),
}
WHERE = " in Test Setup's I/O engine (or with run --engine)"
OS_WORDS = {T.LINUX: "Linux", T.WINDOWS: "Windows", T.MACOS: "macOS"}


class EngineRefused(ValueError):
    """The plan's engine cannot run on a manager; str() names both and what to do."""


@dataclass(frozen=True)
class EngineUse:
    """What a manager's jobs run on; ``note``: what the run says at its start (io_uring's options the plan
    asked for that are not used, and why), else empty."""

    name: str
    options: tuple[str, ...] = ()
    note: str = ""


def choose(
    setup: TestSetup, manager: str, os_name: str, *, local: bool, uring_refusal: Callable[[], str | None]
) -> EngineUse:
    """The engine of ``manager``'s jobs. ``uring_refusal`` says why this machine cannot run io_uring (None:
    it can); it is asked only for a local Linux manager. Raises EngineRefused."""
    os_name = T.normalize_os(os_name)
    have = BY_OS[os_name]
    options = tuple(dict.fromkeys(setup.engine_options))
    if setup.engine == AUTO_ENGINE:
        if os_name != T.LINUX:
            return _without(have[0], options, f"it runs {OS_WORDS[os_name]}")
        if not local:
            return _without(have[0], options, "a remote host's kernel is not known: choose io_uring there")
        why = uring_refusal()
        return EngineUse(IO_URING, options) if why is None else _without(have[0], options, why)
    if setup.engine not in have:
        raise EngineRefused(
            f"manager {manager!r} runs {OS_WORDS[os_name]}, whose fio has no {setup.engine} engine: choose "
            f"{', '.join(have[:-1])} or {have[-1]} (or auto){WHERE}"
        )
    if setup.engine != IO_URING:
        return _without(setup.engine, options, f"the plan's engine is {setup.engine}")
    why = uring_refusal() if local else None
    if why is not None:
        raise EngineRefused(
            f"manager {manager!r}: io_uring cannot run here: {why}; choose libaio (or auto){WHERE}"
        )
    return EngineUse(IO_URING, options)


def _without(name: str, options: tuple[str, ...], why: str) -> EngineUse:
    """``name`` without io_uring's options, saying so when the plan had some."""
    note = f"I/O engine {name}, without the io_uring options {', '.join(options)} ({why})" if options else ""
    return EngineUse(name, (), note)
