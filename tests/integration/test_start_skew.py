"""One start-skew rule for every fio version: with one manager's RUN held back 1 s by a proxy, the step
reports that manager last, about 1 s after the other, whichever fio versions the two servers run
(set FIOMETER_EXTRA_FIO to self-built fio binaries, e.g. 3.38, to mix versions; without them both are the
installed fio)."""

from __future__ import annotations

import pytest

from tests.fio_proxy import FioProxy
from tests.integration.test_remote_faults import Collect, plan_for, runner_for
from tests.integration.test_remote_fio import EXTRA_FIO

pytestmark = [pytest.mark.fio, pytest.mark.slow]

DELAY = (
    1.0  # an idle fio server looks at its socket once a second: a RUN held less may start at the same look
)
PAIRS = [("fio", "fio")] + [pair for extra in EXTRA_FIO for pair in (("fio", extra), (extra, "fio"))]


@pytest.mark.parametrize("binaries", PAIRS, ids=["-".join(p) for p in PAIRS])
def test_the_manager_started_later_is_reported_later_by_as_much(tmp_path, fio_server, binaries):
    first = fio_server("127.0.0.2", binaries[0])
    second = fio_server("127.0.0.3", binaries[1])
    proxy = FioProxy(second[0], second[1], "127.0.0.4", run_delay=DELAY)
    listener = Collect()
    try:
        runner = runner_for(
            plan_for(tmp_path, 2),
            {"M1": f"{first[0]}:{first[1]}", "M2": f"{proxy.host}:{proxy.port}"},
            listener,
            run_time=3,
        )
        assert runner.run() == "complete"
    finally:
        proxy.close()
    outcome = listener.outcomes[0]
    starts = outcome.job_started
    print(
        f"\n{binaries}: M2 started {(starts['M2'] - starts['M1']) * 1000:.0f} ms after M1 (held {DELAY * 1000:.0f} ms)"
    )
    assert set(starts) == {"M1", "M2"}
    assert DELAY - 0.2 < starts["M2"] - starts["M1"] < DELAY + 0.2
    text = next(m.text for m in listener.messages if "started within" in m.text)
    assert text.index("M1 +0 ms") < text.index("M2 +")  # the true order, first to last
