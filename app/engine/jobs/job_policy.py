"""What Fiometer is willing to send to fio: an allow-list of job options, checked on every job.

`fio --server` has no authentication and some options run programs (exec_prerun, exec_postrun,
trigger commands, external ioengines). Fiometer's job files are generated, but this check runs on
the final text right before it leaves, so no future feature or hand-made plan can slip one through.
"""

from __future__ import annotations

ALLOWED_OPTIONS = frozenset(
    {
        # global run control
        "ioengine",
        "thread",
        "direct",
        "time_based",
        "runtime",
        "ramp_time",
        "norandommap",
        "continue_on_error",
        "lat_percentiles",
        "clat_percentiles",
        # per job: target, size, depth
        "filename",
        "size",
        "io_size",
        "loops",
        "offset",
        "iodepth",
        "allow_mounted_write",
        # network workers: fio's net engine over TCP between two managers
        "protocol",
        "port",
        "listen",
        "hostname",
        "startdelay",
        # access specification
        "rw",
        "rwmixread",
        "percentage_random",
        "bs",
        "bssplit",
        "bs_unaligned",
        "blockalign",
        "thinktime",
        "thinktime_blocks",
        "thinktime_blocks_type",
        # io_uring's options (TestSetup.engine_options), sent only with ioengine=io_uring
        "fixedbufs",
        "registerfiles",
        "sqthread_poll",
        "hipri",
        # seeds and data
        "randrepeat",
        "randseed",
        "buffer_pattern",
        "refill_buffers",
        "scramble_buffers",
    }
)
ALLOWED_ENGINES = frozenset({"libaio", "io_uring", "windowsaio", "posixaio", "psync", "sync", "null", "net"})


class JobRefused(ValueError):
    """The job text has something Fiometer does not send; str() names the line and option."""


def check_job_text(text: str) -> None:
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith((";", "#")) or (line.startswith("[") and line.endswith("]")):
            continue
        key, _, value = line.partition("=")
        key = key.strip()
        if key not in ALLOWED_OPTIONS:
            raise JobRefused(
                f"job line {n}: option {key!r} is not one Fiometer sends to fio "
                "(only benchmark options are allowed; commands and external engines never are)"
            )
        if key == "ioengine" and value.strip() not in ALLOWED_ENGINES:
            raise JobRefused(
                f"job line {n}: ioengine {value.strip()!r} is not allowed; use one of "
                + ", ".join(sorted(ALLOWED_ENGINES))
            )
