"""The TEST SETUP and RESULTS DISPLAY sections (Iometer's CPageSetup / CPageDisplay::LoadConfig)."""

from __future__ import annotations

from icf_import.cursor import Context, Cursor, Fail, shown
from icf_import.document import (
    RECORD_RESULTS,
    TEST_TYPES,
    BarChart,
    Cycling,
    QueueDepthCycling,
    ResultsDisplay,
    TestSetup,
)
from icf_import.lexer import STRICT_TEST_SETUP_VERSION, extract_int, extract_token, trim
from icf_import.values import name_or_index, step_type, take_int, take_ints, workers_to_spawn

SECTION_HEADERS = ("'test setup", "'results display", "'access specifications", "'manager list")
UPDATE_FREQUENCIES = (0, 1, 2, 3, 4, 5, 10, 15, 30, 45, 60)
BAR_COUNT = 6


def read_test_setup(cur: Cursor, ts: TestSetup, ctx: Context) -> None:
    """Fills ts from the key/value pairs up to 'END test setup'."""
    expected = "a TEST SETUP key or 'END test setup'"
    while True:
        p = cur.get_pair(expected)
        key = p.key.lower()
        line = p.value_line
        if key == "'end test setup":
            return
        if _set_value(key, p.value, line, ts, ctx):
            continue
        if ctx.version_below(STRICT_TEST_SETUP_VERSION):
            # Files before 1999.02.17 may lack 'END test setup': an unknown key ends the section.
            if not key.startswith(SECTION_HEADERS):
                ctx.warn(
                    p.key_line,
                    f"TEST SETUP ends at the unrecognized key {shown(p.key)} "
                    "(files older than 1999.02.17 may omit 'END test setup')",
                )
            return
        raise Fail(p.key_line, f"expected {expected}, found {shown(p.key)}")


def _set_value(key: str, value: str, line: int, ts: TestSetup, ctx: Context) -> bool:
    """Sets the TEST SETUP value ``key`` (lower case) names; False for a key that is not one."""
    if key == "'test description":
        ts.description = value
    elif key == "'run time":
        numbers, _ = take_ints(value, 3, line, "Run Time", ("hours", "minutes", "seconds"))
        ts.run_time = (numbers[0], numbers[1], numbers[2])
    elif key.startswith("'ramp up time"):
        ts.ramp_up, _ = take_int(value, line, "Ramp Up Time")
    elif key == "'default workers to spawn":
        count, _ = take_int(value, line, "Default Workers to Spawn")
        ts.disk_workers_to_spawn = -1 if count == 0 else count  # 0 meant "# of CPUs"
        ts.ancient_default_workers = True
    elif key == "'default disk workers to spawn":
        ts.disk_workers_to_spawn = workers_to_spawn(value, line, "Default Disk Workers to Spawn")
    elif key == "'default network workers to spawn":
        ts.network_workers_to_spawn = workers_to_spawn(value, line, "Default Network Workers to Spawn")
    elif key == "'record results":
        ts.record_results = name_or_index(value, RECORD_RESULTS, line, "Record Results")
    elif key == "'worker cycling":
        ts.worker_cycling = _cycling(value, line, "Worker Cycling", ctx)
    elif key == "'disk cycling":
        ts.disk_cycling = _cycling(value, line, "Disk Cycling", ctx)
    elif key == "'queue depth cycling":
        names = ("start", "end", "step")
        (start, end, step), rest = take_ints(value, 3, line, "Queue Depth Cycling", names)
        kind = step_type(rest, line, "Queue Depth Cycling", ctx)
        ts.queue_depth_cycling = QueueDepthCycling(start, end, step, kind)
    elif key == "'test type":
        ts.test_type = name_or_index(value, TEST_TYPES, line, "Test Type")
    else:
        return False
    return True


def _cycling(value: str, line: int, what: str, ctx: Context) -> Cycling:
    (start, step), rest = take_ints(value, 2, line, what, ("start", "step"))
    return Cycling(start, step, step_type(rest, line, what, ctx))


def read_results_display(cur: Cursor, rd: ResultsDisplay, ctx: Context) -> None:
    """Fills rd from the pairs up to 'END results display'."""
    expected = "a RESULTS DISPLAY key or 'END results display'"
    while True:
        p = cur.get_pair(expected)
        key = p.key.lower()
        if key == "'end results display":
            return
        if key == "'record last update results,update frequency,update type":
            token, rest = extract_token(p.value)
            if token.upper() not in ("ENABLED", "DISABLED"):
                ctx.warn(
                    p.value_line,
                    f"expected ENABLED or DISABLED for Record Last Update Results, "
                    f"found {shown(token)}; read as DISABLED (as Iometer does)",
                )
            rd.record_last_update = token.upper() == "ENABLED"
            _update(rest, p.value_line, rd, ctx)
        elif key == "'update frequency,update type":
            rd.record_last_update = None
            _update(p.value, p.value_line, rd, ctx)
        elif key.startswith("'bar chart"):
            _bar_chart(p.key, p.key_line, p.value, p.value_line, rd, ctx)
        else:
            raise Fail(p.key_line, f"expected {expected}, found {shown(p.key)}")


def _update(value: str, line: int, rd: ResultsDisplay, ctx: Context) -> None:
    frequency, rest = take_int(value, line, "Update Frequency")
    kind = trim(rest).upper()
    if kind not in ("LAST_UPDATE", "WHOLE_TEST"):
        raise Fail(
            line, f"expected LAST_UPDATE or WHOLE_TEST after the update frequency, found {shown(trim(rest))}"
        )
    if frequency not in UPDATE_FREQUENCIES:
        ctx.warn(
            line,
            f"update frequency {frequency} s is not one Iometer offers "
            f"({', '.join(map(str, UPDATE_FREQUENCIES))}); Iometer shows it as infinity (0)",
        )
    rd.update_frequency = frequency
    rd.update_type = kind


def _bar_chart(
    key: str, key_line: int, value: str, value_line: int, rd: ResultsDisplay, ctx: Context
) -> None:
    number, item, skipped = extract_int(key[len("'bar chart") :])
    if number is None or trim(skipped):
        raise Fail(key_line, f"expected 'Bar chart <1..6> ...', found {shown(key)}")
    item = trim(item).lower()
    if not 1 <= number <= BAR_COUNT:
        ctx.warn(key_line, f"bar chart number {number} is outside 1..6; line ignored (as Iometer does)")
        return
    if item not in ("statistic", "manager id, manager name", "worker id, worker name"):
        ctx.warn(
            key_line,
            f"expected 'statistic', 'manager ID, manager name' or 'worker ID, worker name' "
            f"after 'Bar chart {number}', found {shown(item)}; line ignored (as Iometer does)",
        )
        return
    chart = next((c for c in rd.bar_charts if c.index == number), None)
    if chart is None:
        chart = BarChart(number, "")
        rd.bar_charts.append(chart)
    if item == "statistic":
        chart.statistic = value  # unknown names are kept; Iometer ignores them silently
    elif item == "manager id, manager name":
        chart.manager = take_int(value, value_line, "the bar chart manager ID")
    else:
        chart.worker = take_int(value, value_line, "the bar chart worker ID")
