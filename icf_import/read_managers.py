"""The MANAGER LIST section: managers, their workers, default settings, assigned specs, targets.

Follows ManagerList/Manager/Worker::LoadConfig: block headers inside a worker are whole lines
compared after trimming; everything else is read as key/value pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

from icf_import.cursor import Context, Cursor, Fail, Pair, shown
from icf_import.document import Manager, Target, Worker
from icf_import.values import take_count, take_int, take_switch, target_type

KEY_QD3 = "'number of outstanding ios,test connection rate,transactions per connection"
KEY_QD5 = KEY_QD3 + ",use fixed seed,fixed seed value"
KEY_DISK2 = "'disk maximum size,starting sector"
KEY_DISK3 = KEY_DISK2 + ",data pattern"


@dataclass
class SpecRef:
    """An 'Assigned access specs' entry and where it is, for the checks after reading."""

    worker: Worker
    name: str
    line: int


def read_managers(cur: Cursor, managers: list[Manager], refs: list[SpecRef], ctx: Context) -> None:
    expected = "'Manager ID, manager name' or 'END manager list'"
    while True:
        text, line = cur.next_line(expected)
        lower = text.lower()
        if lower == "'end manager list":
            return
        if lower != "'manager id, manager name":
            raise Fail(line, f"expected {expected}, found {shown(text)}")
        _manager(cur, line, managers, refs, ctx)


def _manager(cur: Cursor, key_line: int, managers: list[Manager], refs: list[SpecRef], ctx: Context) -> None:
    value, line = cur.next_line("'<id>,<manager name>' after 'Manager ID, manager name'")
    if value == "" or cur.is_key(line - 1):
        raise Fail(
            line, f"expected '<id>,<manager name>' after 'Manager ID, manager name', found {shown(value)}"
        )
    mgr_id, name = take_int(value, line, "the manager ID")
    p = cur.get_pair("'Manager network address'")
    if p.key.lower() != "'manager network address":
        raise Fail(
            p.key_line, f"expected 'Manager network address' after the manager ID, found {shown(p.key)}"
        )
    mgr = Manager(mgr_id, name, p.value, line_no=key_line)
    managers.append(mgr)
    expected = "'Worker' or 'End manager'"
    while True:
        p = cur.get_pair(expected)
        key = p.key.lower()
        if key == "'end manager":
            return
        if key != "'worker":
            raise Fail(p.key_line, f"expected {expected}, found {shown(p.key)}")
        _worker(cur, p, mgr, refs, ctx)


def _worker(cur: Cursor, head: Pair, mgr: Manager, refs: list[SpecRef], ctx: Context) -> None:
    p = cur.get_pair("'Worker type'")
    if p.key.lower() != "'worker type":
        raise Fail(p.key_line, f"expected 'Worker type' after the worker name, found {shown(p.key)}")
    kind = target_type(p.value, p.value_line, f"the type of worker '{head.value}'")
    wkr = Worker(head.value, kind, has_default_settings=False, line_no=head.key_line)
    if kind != "DISK":
        wkr.disk_max_size = wkr.disk_start_sector = None
    mgr.workers.append(wkr)
    expected = (
        "'Default target settings for worker', 'Assigned access specs', 'Target assignments' or 'End worker'"
    )
    while True:
        text, line = cur.next_line(expected)
        lower = text.lower()
        if lower == "'end worker":
            return
        if lower == "'default target settings for worker":
            wkr.has_default_settings = True
            _defaults(cur, wkr, ctx)
        elif lower == "'assigned access specs":
            if wkr.assigned_specs is None:
                wkr.assigned_specs = []
            _assigned(cur, wkr, refs, ctx)
        elif lower == "'target assignments":
            if wkr.targets is None:
                wkr.targets = []
            _targets(cur, wkr, ctx)
        else:
            raise Fail(line, f"expected {expected}, found {shown(text)}")


def _defaults(cur: Cursor, wkr: Worker, ctx: Context) -> None:
    expected = "a default target setting or 'End default target settings for worker'"
    while True:
        p = cur.get_pair(expected)
        key = p.key.lower()
        value, line = p.value, p.value_line
        if key == "'end default target settings for worker":
            return
        if key in (KEY_QD3, KEY_QD5):
            wkr.queue_depth, rest = take_int(value, line, "Number of outstanding IOs")
            if wkr.queue_depth < 1:
                ctx.error(
                    line,
                    f"worker '{wkr.name}': Number of outstanding IOs is {wkr.queue_depth}; expected 1 "
                    "or more (I/Os in flight per target): correct it on this line",
                )
            wkr.test_connection_rate, rest = take_switch(rest, line, "test connection rate")
            wkr.transactions_per_connection, rest = take_int(rest, line, "transactions per connection")
            if key == KEY_QD5:
                wkr.use_fixed_seed, rest = take_switch(rest, line, "use fixed seed")
                wkr.fixed_seed, rest = take_count(rest, line, "fixed seed value")
        elif key in (KEY_DISK2, KEY_DISK3):
            _only_for(wkr, "DISK", p)
            wkr.disk_max_size, rest = take_count(value, line, "Disk maximum size")
            wkr.disk_start_sector, rest = take_count(rest, line, "starting sector")
            if key == KEY_DISK3:
                wkr.data_pattern, rest = take_int(rest, line, "Data pattern")
                if wkr.data_pattern not in (0, 1, 2):
                    ctx.warn(
                        line,
                        f"Data pattern is {wkr.data_pattern}, expected 0 (repeating bytes), "
                        "1 (pseudo random) or 2 (full random)",
                    )
        elif key == "'local network interface":
            _only_for(wkr, "NETWORK", p)
            wkr.local_interface = value
        elif key == "'vi outstanding ios":
            _only_for(wkr, "NETWORK,VI", p)
            wkr.vi_outstanding, _ = take_int(value, line, "VI outstanding IOs")
        else:
            raise Fail(p.key_line, f"expected {expected}, found {shown(p.key)}")


def _only_for(wkr: Worker, kind: str, p: Pair) -> None:
    if not wkr.type.startswith(kind):
        raise Fail(
            p.key_line,
            f"{shown(p.key)} is only allowed for {kind} workers; worker '{wkr.name}' is {wkr.type}",
        )


def _assigned(cur: Cursor, wkr: Worker, refs: list[SpecRef], ctx: Context) -> None:
    assert wkr.assigned_specs is not None
    expected = "an access specification name or 'End assigned access specs'"
    while True:
        text, line = cur.next_line(expected)
        if text.lower() == "'end assigned access specs":
            return
        if cur.is_key(line - 1):
            raise Fail(line, f"expected {expected}, found {shown(text)}")
        if text == "":
            ctx.warn(line, f"blank line in the access specs assigned to worker '{wkr.name}' skipped")
            continue
        wkr.assigned_specs.append(text)
        refs.append(SpecRef(wkr, text, line))


def _targets(cur: Cursor, wkr: Worker, ctx: Context) -> None:
    assert wkr.targets is not None
    expected = "'Target' or 'End target assignments'"
    while True:
        p = cur.get_pair(expected)
        key = p.key.lower()
        if key == "'end target assignments":
            return
        if key == "'end target":
            ctx.warn(
                p.key_line,
                "duplicated 'End target' skipped (Iometer 1.1.0 rejects the file here: it "
                "expects 'Target' or 'End target assignments')",
            )
            continue
        if key != "'target":
            raise Fail(p.key_line, f"expected {expected}, found {shown(p.key)}")
        if p.value_line == p.key_line:  # the next key line ends the search for a value
            raise cur.fail("a target name after 'Target'")
        if p.value == "":
            raise Fail(p.value_line, "expected a target name after 'Target', found a blank line")
        target = Target(p.value, line_no=p.key_line)
        t = cur.get_pair("'Target type' inside a target")
        if t.key.lower() != "'target type":
            raise Fail(t.key_line, f"expected 'Target type' inside a target, found {shown(t.key)}")
        target.type = target_type(t.value, t.value_line, f"the type of target '{target.name}'")
        if target.type != wkr.type:
            raise Fail(
                t.value_line,
                f"target '{target.name}' is {target.type}, but worker '{wkr.name}' is "
                f"{wkr.type}; expected a target of the worker's type",
            )
        if wkr.type != "DISK":
            m = cur.get_pair("'Target manager ID, manager name' after a network target's type")
            if m.key.lower() != "'target manager id, manager name":
                raise Fail(
                    m.key_line,
                    f"expected 'Target manager ID, manager name' after a network target's "
                    f"type, found {shown(m.key)}",
                )
            mgr_id, name = take_int(m.value, m.value_line, "the target manager ID")
            if name == "":
                raise Fail(
                    m.value_line,
                    f"expected '<id>,<manager name>' for the target manager, found {shown(m.value)}",
                )
            target.partner_manager = (mgr_id, name)
        end, line = cur.next_line("'End target'")
        if end.lower() != "'end target":
            raise Fail(line, f"expected 'End target', found {shown(end)}")
        wkr.targets.append(target)
        if wkr.type != "DISK" and len(wkr.targets) > 1:
            ctx.warn(
                target.line_no,
                f"network worker '{wkr.name}' has more than one target; Iometer keeps only the last one",
            )
