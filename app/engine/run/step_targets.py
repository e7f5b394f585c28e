"""A step's targets at its start, before its clock: checked again, opened and held (here, or on an ssh://
manager's host: ``guards.held_targets``, ``guards.remote_hold``), a plain fio server's test files probed
again and missing ones laid out; after the step, the test files fio was given adopted and let go of."""

from __future__ import annotations

import dataclasses
import os
import platform
import time
from collections.abc import Callable

from app.engine.guards import unverified
from app.engine.guards.held_targets import Held, HoldRefused, hold
from app.engine.guards.safety import is_armed, marker_of
from app.engine.jobs.jobfile import JobFile
from app.engine.remote import files as remote_files
from app.engine.remote import hold as remote_hold
from app.engine.run.preflight import PreparedRun
from app.engine.transports.transport import Finished, Message, TransportError


def holds_here() -> bool:
    """Local targets are opened and held here (``guards.held_targets``: descriptors fio inherits as
    ``/proc/self/fd/N``) on Linux only; an ssh:// manager's are held on its host, wherever this runs."""
    return platform.system() == "Linux"


class StepTargets:
    """The targets of ``run``'s steps, one step at a time; ``cancelled`` (the run aborted) ends a wait."""

    def __init__(self, run: PreparedRun, cancelled: Callable[[], bool]) -> None:
        self.run = run
        self.cancelled = cancelled
        self._held_there: dict[str, remote_hold.HeldThere] = {}  # this step's targets held on ssh:// hosts

    def hold(
        self, files: dict[str, JobFile], said: list[Message]
    ) -> tuple[dict[str, Held], tuple[str, str] | None]:
        """Open, verify and lay out the local managers' targets for this step (``engine.held_targets``):
        ({manager: what it holds}, (manager, why the step may not run) or None); what it did goes to ``said``."""
        held: dict[str, Held] = {}
        run = self.run
        if run.options.engine == "null":  # null never opens its files
            return held, None
        for name, jf in files.items():
            # ssh:// hosts hold their own targets whatever this machine runs; local ones only here on Linux
            if not run.checked_there(name) and (run.endpoints[name].host != "local" or not holds_here()):
                continue

            def say(text: str, n: str = name) -> None:
                said.append(Message(n, text, "info"))

            try:
                if run.checked_there(name):
                    held[name] = self._hold_there(name, jf, say)
                    continue
                held[name] = hold(
                    jf,
                    run.arming,
                    self._owns,
                    cancelled=self.cancelled,
                    say=say,
                    others=[h for n, h in held.items() if n not in self._held_there],
                )
            except (HoldRefused, remote_hold.RemoteUnavailable) as e:
                self.release(held, adopt=False)
                return {}, (name, str(e))
        return held, None

    def _hold_there(self, name: str, jf: JobFile, say: Callable[[str], None]) -> Held:
        """An ssh:// manager's targets opened, checked and held on its host; fio there gets
        ``/proc/<pid>/fd/N`` of the process holding them. Raises HoldRefused or RemoteUnavailable."""
        run = self.run
        ep = run.endpoints[name]
        assert ep.python_there is not None
        host = run.host_key(name)
        known = {j.path: facts for j in jf.jobs if (facts := run.registry.known(host, j.path)) is not None}
        try:
            there = remote_hold.hold_there(
                ep.python_there, jf, run.arming_of(name), known, cancelled=self.cancelled
            )
        except remote_hold.RemoteUnavailable as e:
            raise remote_hold.RemoteUnavailable(
                f"Fiometer could not check and hold the targets on that host ({e}); nothing was written"
            ) from e
        for text in there.said:
            say(text)
        self._held_there[name] = there
        return Held(there.text)

    def _owns(self, path: str, st: os.stat_result, fd: int) -> bool:
        return self.run.registry.owns_stat(path, st, marker_of(fd))

    def release(self, held: dict[str, Held], adopt: bool = True) -> None:
        """After a step: adopt the test files fio was given (only while their names still lead to them), then
        let go of every descriptor (here, and held on ssh:// hosts)."""
        registry = self.run.registry
        for h in held.values():
            if h.files and adopt:
                registry.adopt(h.files)
            h.close()
        for name, there in self._held_there.items():
            if adopt and there.files:
                facts = there.adopt()
                registry.remember(self.run.host_key(name), facts, [f for f in there.files if f not in facts])
            there.close()
        self._held_there.clear()

    def remote_refusals(self, files: dict[str, JobFile], said: list[Message]) -> dict[str, Finished]:
        """The remote test files checked again (and missing ones laid out) before the step's clock starts; if
        any is refused, no manager starts: the step fails before anything is written."""
        refused = self._recheck_remote_files(files, said)
        if not refused:
            return {}
        return {
            name: Finished(
                name,
                False,
                refused.get(name)
                or "not started: another manager's test file changed since the run was checked",
            )
            for name in files
        }

    def _recheck_remote_files(self, files: dict[str, JobFile], said: list[Message]) -> dict[str, str]:
        """At a step's start, before anything is written: each remote test file is still what was armed or
        Fiometer's own (a missing one is laid out now, with Fiometer's marker, which goes to ``said``). Why a
        manager must not start, by manager."""
        o = self.run.options
        refused: dict[str, str] = {}
        for name, jf in files.items():
            known = self.run.remote_files.get(name)
            if not known:
                continue
            step = remote_files.remote_targets([jf])
            wanted = [dataclasses.replace(known[path], writes=f.writes) for path, f in step.items()]
            try:
                probed = self._probe_and_lay_out(name, wanted, said)
            except TransportError as e:
                refused[name] = str(e)
                continue
            risks, problems = remote_files.assess(
                name, wanted, probed, {j.path: j.target_name for j in jf.jobs}
            )
            why = problems + [
                f"{r.path}: {r.reason}" for r in risks if not is_armed(r, o.allow_write, o.allow_write_in_use)
            ]
            if why:
                refused[name] = (
                    "not started, nothing written: a test file changed since the run was checked — "
                    + "; ".join(why)
                )
        return refused

    def _probe_and_lay_out(
        self, name: str, wanted: list[remote_files.RemoteFile], said: list[Message]
    ) -> dict[str, remote_files.Probed]:
        """A remote manager's test files probed before the step, and missing ones laid out (each phase
        bounded: ``phase_bounds``); what was laid out goes to ``said``. Raises TransportError naming the
        phase."""
        run = self.run
        ep, bounds, where = run.endpoints[name], run.options.bounds, run.where(name)
        try:
            probed = remote_files.probe(
                ep.make_transport, wanted, windows=ep.windows, where=where, bounds=bounds
            )
        except TransportError as e:
            raise TransportError(
                f"Fiometer could not check the test files through fio before the step: {e}"
            ) from None
        for f in wanted:
            if probed[f.path].state == remote_files.MISSING and probed[f.path].folder_exists:
                self._lay_out(name, f, said)
                probed[f.path] = remote_files.Probed(remote_files.OURS, True)
        return probed

    def _lay_out(self, name: str, f: remote_files.RemoteFile, said: list[Message]) -> None:
        """A missing remote test file laid out again, unless that would write on a host not armed for it."""
        run = self.run
        ep, bounds, where = run.endpoints[name], run.options.bounds, run.where(name)
        if run.plain(name) and not unverified.armed(name, ep.host, run.options.allow_unverified):
            raise TransportError(
                "Fiometer could not check the test files through fio before the step: "
                f"{f.path} is gone, and laying it out again would write on a host not "
                f"armed for unverified writes ({unverified.OPTION})"
            )
        began = time.monotonic()
        try:
            remote_files.lay_out(ep.make_transport, f, where=where, bounds=bounds)
        except TransportError as e:
            raise TransportError(
                f"Fiometer could not lay out the test file {f.path} before the step: {e}"
            ) from None
        said.append(
            Message(
                name,
                f"laid out the test file {f.path} in {time.monotonic() - began:.1f} s (before the step's time)",
                "info",
            )
        )
