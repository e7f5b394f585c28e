"""Remote managers: Fiometer's own client for ``fio --server`` (see :mod:`app.engine.fioproto`)."""

from .fioproto.client import DEFAULT_PORT, RemoteFio, ServerInfo, forget_protocol, probe, run_delay

__all__ = ["DEFAULT_PORT", "RemoteFio", "ServerInfo", "forget_protocol", "probe", "run_delay"]
