"""Writing an IcfDocument as Iometer's SaveConfigFile writes it.

Version line first and last (with its trailing space), section banners with '=' runs, a TAB
before every value, Iometer's exact key spellings. Where keys changed between versions the
document says which variant to write (None fields = the older/absent line), so a file read and
written again reads back the same: parse(write(parse(f))) == parse(f).
"""

from __future__ import annotations

from os import PathLike

from icf_import.document import (
    AccessSpec,
    IcfDocument,
    Manager,
    ResultsDisplay,
    TestSetup,
    Worker,
)

BANNER_WIDTH = 80  # every banner is 80 characters: "'TEST SETUP " + 68 '='


def write(doc: IcfDocument, newline: str = "\r\n") -> str:
    """The file's text; newline ends every line (Iometer on Windows wrote CRLF)."""
    out: list[str] = [f"Version {doc.version} "]
    if doc.test_setup is not None:
        _test_setup(out, doc.test_setup)
    if doc.results_display is not None:
        _results_display(out, doc.results_display)
    if doc.access_specs is not None:
        if doc.spec_format == "old":
            _specs_old(out, doc.access_specs)
        else:
            _specs(out, doc.access_specs)
    if doc.managers is not None:
        _managers(out, doc.managers)
    out.append(f"Version {doc.version} ")
    return newline.join(out) + newline


def encode(doc: IcfDocument, newline: str = "\r\n") -> bytes:
    """The file's bytes in the ANSI code page (cp1252); unencodable characters become '?'."""
    return write(doc, newline).encode("cp1252", errors="replace")


def save(doc: IcfDocument, path: str | PathLike[str], newline: str = "\r\n") -> None:
    """Writes the file in the ANSI code page (cp1252); unencodable characters become '?'. A plain open:
    Fiometer itself writes ``encode()`` through app.safe_files (no links followed, no device replaced)."""
    with open(path, "wb") as f:
        f.write(encode(doc, newline))


def _banner(title: str) -> str:
    head = f"'{title} "
    return head + "=" * (BANNER_WIDTH - len(head))


def _columns(*values: object) -> str:
    """Iometer's setw(11) left-aligned columns; the last value is not padded."""
    *first, last = values
    return "\t" + "".join(f"{v!s:<11}" for v in first) + str(last)


def _workers(count: int) -> str:
    return "\tNUMBER_OF_CPUS" if count == -1 else f"\t{count}"


def _test_setup(out: list[str], ts: TestSetup) -> None:
    h, m, s = ts.run_time
    out += [
        _banner("TEST SETUP"),
        "'Test Description",
        f"\t{ts.description}",
        "'Run Time",
        "'" + _columns("hours", "minutes", "seconds"),
        _columns(h, m, s),
        "'Ramp Up Time (s)",
        f"\t{ts.ramp_up}",
    ]
    if ts.ancient_default_workers:
        # 0 meant "# of CPUs" under this key.
        out += [
            "'Default Workers to Spawn",
            f"\t{0 if ts.disk_workers_to_spawn == -1 else ts.disk_workers_to_spawn}",
        ]
    else:
        out += ["'Default Disk Workers to Spawn", _workers(ts.disk_workers_to_spawn)]
    wc, dc, qc = ts.worker_cycling, ts.disk_cycling, ts.queue_depth_cycling
    out += [
        "'Default Network Workers to Spawn",
        _workers(ts.network_workers_to_spawn),
        "'Record Results",
        f"\t{ts.record_results}",
        "'Worker Cycling",
        "'" + _columns("start", "step", "step type"),
        _columns(wc.start, wc.step, wc.step_type),
        "'Disk Cycling",
        "'" + _columns("start", "step", "step type"),
        _columns(dc.start, dc.step, dc.step_type),
        "'Queue Depth Cycling",
        "'" + _columns("start", "end", "step", "step type"),
        _columns(qc.start, qc.end, qc.step, qc.step_type),
        "'Test Type",
        f"\t{ts.test_type}",
        "'END test setup",
    ]


def _results_display(out: list[str], rd: ResultsDisplay) -> None:
    out.append(_banner("RESULTS DISPLAY"))
    if rd.record_last_update is None:
        out += ["'Update Frequency,Update Type", f"\t{rd.update_frequency},{rd.update_type}"]
    else:
        flag = "ENABLED" if rd.record_last_update else "DISABLED"
        out += [
            "'Record Last Update Results,Update Frequency,Update Type",
            f"\t{flag},{rd.update_frequency},{rd.update_type}",
        ]
    for chart in rd.bar_charts:
        out += [f"'Bar chart {chart.index} statistic", f"\t{chart.statistic}"]
        if chart.manager is not None:
            out += [
                f"'Bar chart {chart.index} manager ID, manager name",
                f"\t{chart.manager[0]},{chart.manager[1]}",
            ]
        if chart.worker is not None:
            out += [
                f"'Bar chart {chart.index} worker ID, worker name",
                f"\t{chart.worker[0]},{chart.worker[1]}",
            ]
    out.append("'END results display")


def _specs(out: list[str], specs: list[AccessSpec]) -> None:
    out.append(_banner("ACCESS SPECIFICATIONS"))
    for spec in specs:
        out += [
            "'Access specification name,default assignment",
            f"\t{spec.name},{spec.default_assignment}",
            "'size,% of size,% reads,% random,delay,burst,align,reply",
        ]
        out += [
            f"\t{sl.size},{sl.of_size},{sl.reads},{sl.random},{sl.delay},{sl.burst},{sl.align},{sl.reply}"
            for sl in spec.lines
        ]
    out.append("'END access specifications")


def _specs_old(out: list[str], specs: list[AccessSpec]) -> None:
    """Pre-1998.05.21 layout: one header line, then six fields per line; no names, no align/reply.

    A reader finds the specs again by adding up '% of size' to 100 and renames them with
    SmartName, so names, assignments, align and reply are not stored in this format.
    """
    out += [_banner("ACCESS SPECIFICATIONS"), "'size, % of size, % reads, % random, delay, burst"]
    out += [
        f"{sl.size} {sl.of_size} {sl.reads} {sl.random} {sl.delay} {sl.burst}"
        for spec in specs
        for sl in spec.lines
    ]
    out.append("'END access specifications")


def _managers(out: list[str], managers: list[Manager]) -> None:
    out.append(_banner("MANAGER LIST"))
    for mgr in managers:
        out += [
            "'Manager ID, manager name",
            f"\t{mgr.id},{mgr.name}",
            "'Manager network address",
            f"\t{mgr.address}",
        ]
        for wkr in mgr.workers:
            _worker(out, wkr)
        out.append("'End manager")
    out.append("'END manager list")


def _flag(on: bool) -> str:
    return "ENABLED" if on else "DISABLED"


def _worker(out: list[str], w: Worker) -> None:
    out += ["'Worker", f"\t{w.name}", "'Worker type", f"\t{w.type}"]
    if w.has_default_settings:
        out.append("'Default target settings for worker")
        if w.use_fixed_seed is None:
            out += [
                "'Number of outstanding IOs,test connection rate,transactions per connection",
                f"\t{w.queue_depth},{_flag(w.test_connection_rate)},{w.transactions_per_connection}",
            ]
        else:
            out += [
                "'Number of outstanding IOs,test connection rate,transactions per connection,"
                "use fixed seed,fixed seed value",
                f"\t{w.queue_depth},{_flag(w.test_connection_rate)},{w.transactions_per_connection},"
                f"{_flag(w.use_fixed_seed)},{w.fixed_seed}",
            ]
        # Like Iometer: the disk line for DISK workers only, the interface for NETWORK, VI sends for VI.
        if w.type == "DISK" and w.disk_max_size is not None:
            start = w.disk_start_sector or 0
            if w.data_pattern is None:
                out += ["'Disk maximum size,starting sector", f"\t{w.disk_max_size},{start}"]
            else:
                out += [
                    "'Disk maximum size,starting sector,Data pattern",
                    f"\t{w.disk_max_size},{start},{w.data_pattern}",
                ]
        if w.type.startswith("NETWORK") and w.local_interface is not None:
            out += ["'Local network interface", f"\t{w.local_interface}"]
        if w.type == "NETWORK,VI" and w.vi_outstanding is not None:
            out += ["'VI outstanding IOs", f"\t{w.vi_outstanding}"]
        out.append("'End default target settings for worker")
    if w.assigned_specs is not None:
        out.append("'Assigned access specs")
        out += [f"\t{name}" for name in w.assigned_specs]
        out.append("'End assigned access specs")
    if w.targets is not None:
        out.append("'Target assignments")
        for t in w.targets:
            out += ["'Target", f"\t{t.name}", "'Target type", f"\t{t.type}"]
            if t.type != "DISK" and t.partner_manager is not None:
                out += [
                    "'Target manager ID, manager name",
                    f"\t{t.partner_manager[0]},{t.partner_manager[1]}",
                ]
            out.append("'End target")
        out.append("'End target assignments")
    out.append("'End worker")
