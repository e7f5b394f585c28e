"""``ssh://[user@]host[:port]`` addresses: parsed where jobs are laid out (network workers) and where the
SSH transport starts fio, so this leaf sits below both."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SSH_URL = re.compile(r"^ssh://(?:(?P<user>[^@/\s]+)@)?(?P<host>\[[^\]]+\]|[^:/@\s]+)(?::(?P<port>\d+))?/?$")


@dataclass(frozen=True)
class SshAddress:
    host: str
    user: str | None = None
    port: int | None = None

    @property
    def destination(self) -> str:
        return f"{self.user}@{self.host}" if self.user else self.host

    def __str__(self) -> str:
        port = f":{self.port}" if self.port else ""
        return f"ssh://{self.destination}{port}"


def parse_ssh(text: str) -> SshAddress | None:
    """``ssh://[user@]host[:port]`` -> SshAddress; None if ``text`` is not an ssh:// address.
    Raises ValueError for an ssh:// address that is malformed."""
    text = text.strip()
    if not text.lower().startswith("ssh://"):
        return None
    m = _SSH_URL.match(text)
    if not m or (m.group("port") and not 0 < int(m.group("port")) < 65536):
        raise ValueError(
            f"{text!r} is not ssh://[user@]host[:port] (e.g. ssh://admin@storage1 or ssh://10.0.0.5:2222)"
        )
    return SshAddress(
        m.group("host").strip("[]"), m.group("user"), int(m.group("port")) if m.group("port") else None
    )
