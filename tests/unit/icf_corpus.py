"""Where the .icf corpus lives, and small builders for hand-written .icf text."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import shared_dir


def corpus_dir() -> Path:
    """tests/fixtures/icf: the .icf corpus (see tests/fixtures/PROVENANCE.md)."""
    return shared_dir() / "icf"


CORPUS = corpus_dir()
CORPUS_FILES = sorted(CORPUS.rglob("*.icf"))


def corpus(name: str) -> Path:
    matches = [p for p in CORPUS_FILES if p.name == name]
    assert len(matches) == 1, f"{name} not found in {CORPUS}"
    return matches[0]


def lines_in(data: bytes) -> int:
    """How many lines the bytes hold (CRLF, LF or CR end a line; a final break adds none; a UTF-8 BOM
    is not content)."""
    text = data.removeprefix(b"\xef\xbb\xbf").replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if not text:
        return 0
    return text.count(b"\n") + (0 if text.endswith(b"\n") else 1)


TEST_SETUP = """'TEST SETUP ====================================================================
'Test Description
\thand-written
'Run Time
'\thours      minutes    seconds
\t0          1          30
'Ramp Up Time (s)
\t5
'Default Disk Workers to Spawn
\tNUMBER_OF_CPUS
'Default Network Workers to Spawn
\t0
'Record Results
\tALL
'Worker Cycling
'\tstart      step       step type
\t1          1          LINEAR
'Disk Cycling
'\tstart      step       step type
\t1          1          LINEAR
'Queue Depth Cycling
'\tstart      end        step       step type
\t1          32         2          EXPONENTIAL
'Test Type
\tNORMAL
'END test setup
"""

RESULTS_DISPLAY = """'RESULTS DISPLAY ===============================================================
'Record Last Update Results,Update Frequency,Update Type
\tDISABLED,0,WHOLE_TEST
'Bar chart 1 statistic
\tTotal I/Os per Second
'END results display
"""

ACCESS_SPECS = """'ACCESS SPECIFICATIONS =========================================================
'Access specification name,default assignment
\t4K random read,NONE
'size,% of size,% reads,% random,delay,burst,align,reply
\t4096,100,100,100,0,1,4096,0
'END access specifications
"""

DISK_WORKER = """'Worker
\tWorker 1
'Worker type
\tDISK
'Default target settings for worker
'Number of outstanding IOs,test connection rate,transactions per connection,use fixed seed,fixed seed value
\t4,DISABLED,1,DISABLED,0
'Disk maximum size,starting sector,Data pattern
\t0,0,0
'End default target settings for worker
'Assigned access specs
\t4K random read
'End assigned access specs
'Target assignments
'Target
\tC: "SYSTEM"
'Target type
\tDISK
'End target
'End target assignments
'End worker
"""


def manager_list(*workers: str, mgr: str = "1,HOST", address: str = "10.0.0.1") -> str:
    return (
        "'MANAGER LIST ==================================================================\n"
        f"'Manager ID, manager name\n\t{mgr}\n'Manager network address\n\t{address}\n"
        + "".join(workers)
        + "'End manager\n'END manager list\n"
    )


def icf(*sections: str, version: str = "1.1.0", newline: str = "\n") -> str:
    """A whole file: version line, the sections as given, version line."""
    text = f"Version {version} \n" + "".join(sections) + f"Version {version} \n"
    return text.replace("\n", newline)


def full(version: str = "1.1.0", newline: str = "\n") -> str:
    return icf(
        TEST_SETUP, RESULTS_DISPLAY, ACCESS_SPECS, manager_list(DISK_WORKER), version=version, newline=newline
    )


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """1-based number of the nth line whose content starts with needle."""
    seen = 0
    for i, line in enumerate(text.splitlines(), 1):
        if line.startswith(needle):
            seen += 1
            if seen == nth:
                return i
    raise AssertionError(f"{needle!r} not in text")
