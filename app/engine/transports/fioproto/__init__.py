"""fio's client/server network protocol, spoken by Fiometer itself (no Qt, no numpy: stdlib and orjson).

- :mod:`.frames`: 24-byte headers, CRC-16/ARC, fragmentation and reassembly
- :mod:`.commands`: opcodes, payloads we send, parsers for the small replies
- :mod:`.layouts`: the thread_stat / cmd_ts_pdu layout of every supported protocol version, as data
- :mod:`.tstat`, :mod:`.statmath`, :mod:`.decode`: a TS payload -> the stock client's JSON job entry
- :mod:`.session`: server messages -> Snapshot / Message / Finished events
- :mod:`.client`: sockets, version discovery, watchdogs; ``probe`` and ``RemoteFio``
- (the reader for relay recordings of real sessions is a test helper: `tests/fioproto_recording.py`)
"""

from .client import DEFAULT_PORT, RemoteFio, ServerInfo, forget_protocol, probe
from .decode import decode_ts
from .layouts import SUPPORTED_PROTOCOLS, UnsupportedVersion, supported_fio_versions

__all__ = [
    "DEFAULT_PORT",
    "SUPPORTED_PROTOCOLS",
    "RemoteFio",
    "ServerInfo",
    "UnsupportedVersion",
    "decode_ts",
    "forget_protocol",
    "probe",
    "supported_fio_versions",
]
