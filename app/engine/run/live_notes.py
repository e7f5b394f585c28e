"""The per-manager liveness notes of a step, summarised: one line per kind and second, not one per manager.

With 64 managers on a loaded machine, "numbers from M7 (…) are late", "… arrived again", "… has sent
nothing for 4 s", "… is answering again" came one line per manager and drowned the message panel, the
CLI and the stored step. :class:`LiveNotes` holds such notes (from the step watch and from the transports)
and gives, at most once per ``every_s`` and kind, one message: the note itself where one manager said it,
else "numbers late: 12 managers (M3, M7, … +6); e.g. <the first note>". Other messages pass untouched.
A note is known by its ``Message.kind``, which whoever says it sets (never by its wording); the summary
line keeps that kind.
"""

from __future__ import annotations

from app.engine.transports.transport import (
    ANSWERING_AGAIN,
    ARRIVING_AGAIN,
    BEHIND,
    LATE,
    SENT_NOTHING,
    UNREACHABLE,
    Message,
)

SUMMARY_S = 1.0  # at most one line per kind in this time
NAMES_SHOWN = 6

# a liveness note's kind (Message.kind) -> what its summary line calls it
KINDS: dict[str, str] = {
    LATE: "numbers late",
    ARRIVING_AGAIN: "numbers arriving again",
    SENT_NOTHING: "sent nothing (host busy or frozen?)",
    ANSWERING_AGAIN: "answering again",
    UNREACHABLE: "unreachable",
    BEHIND: "behind on fio's clock (reports arrive late)",
}
_LEVELS = {"info": 0, "warning": 1, "error": 2}


def kind_of(msg: Message) -> str | None:
    """The liveness kind of a message (a key of ``KINDS``), or None for any other message (errors are never
    held back)."""
    if msg.level == "error" or msg.kind not in KINDS:
        return None
    return msg.kind


class LiveNotes:
    """Liveness notes held and summarised per kind; ``add`` returns what to tell now (the message itself
    when it is not a liveness note), ``due(now)`` the summaries whose time has come, ``flush()`` the rest."""

    def __init__(self, every_s: float = SUMMARY_S) -> None:
        self.every_s = every_s
        self._held: dict[str, list[Message]] = {}
        self._since: dict[str, float] = {}  # kind -> when its first held note came

    def add(self, msg: Message, now: float) -> list[Message]:
        kind = kind_of(msg)
        if kind is None:
            return [msg]
        held = self._held.setdefault(kind, [])
        if all(m.manager != msg.manager for m in held):  # one per manager and line (the first says it)
            held.append(msg)
        self._since.setdefault(kind, now)
        return []

    def due(self, now: float) -> list[Message]:
        """The kinds held for ``every_s`` or more, one line each."""
        return [self._take(k) for k in list(self._held) if now - self._since[k] >= self.every_s]

    def flush(self) -> list[Message]:
        return [self._take(k) for k in list(self._held)]

    def _take(self, kind: str) -> Message:
        notes = self._held.pop(kind)
        del self._since[kind]
        return summary(kind, notes)


def summary(kind: str, notes: list[Message]) -> Message:
    """One line for ``notes`` of one kind (of ``KINDS``): the note itself for one manager."""
    if len(notes) == 1:
        return notes[0]
    names = sorted({m.manager for m in notes}, key=_natural)
    shown = ", ".join(names[:NAMES_SHOWN]) + (
        f", … +{len(names) - NAMES_SHOWN}" if len(names) > NAMES_SHOWN else ""
    )
    level = max((m.level for m in notes), key=lambda lv: _LEVELS.get(lv, 0))
    return Message("", f"{KINDS[kind]}: {len(names)} managers ({shown}); e.g. {notes[0].text}", level, kind)


def _natural(name: str) -> tuple[str, int, str]:
    """M2 before M10."""
    head = name.rstrip("0123456789")
    digits = name[len(head) :]
    return (head, int(digits) if digits else -1, name)
