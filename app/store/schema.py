"""The database layout: the statements of each schema version (``V1``, ``V2``, ...).

``migrations.MIGRATIONS`` applies them in order (``MIGRATIONS[n]`` takes a database from schema version
``n`` to ``n + 1``, kept in ``PRAGMA user_version``); a new file runs them all, so a fresh database and a
migrated one are built by the same statements. Never edit a released version's statements: add a new
``Vn`` here and append its migration in ``migrations.py``.

Layout (v1):
  runs -< run_tags, managers -< workers -< targets, messages
  runs -< steps -< step_outputs (job file + raw fio output per manager), messages
  steps -< series (one measured thing: level + manager + key) -< samples (per interval, both windows)
                                                               -- results (final, with histograms)
Metrics are plain columns (``METRIC_COLUMNS``); histograms are compact JSON (see ``codec``).
v2 adds the interval window's histograms to samples (``V2``).
v3 (``V3``, see ``compact``) makes the store compact: a series whose samples are the same as another's
(the target of a one-target worker, ALL of a one-manager run) points at it (``series.same_as``) instead
of repeating them; samples are clustered by series (no rowid; the key is (series, t)); the interval
histograms move to ``sample_hists`` as compressed arrays (``codec``), results' histograms and fio's
raw output are compressed too; samples keep the interval's p99 latency (``i_p99_ns``) where histograms
are kept, so charts need not decode histograms; each series' peaks per 10 s are kept when its step ends
(``sample_peaks``, see ``peaks``), so a long run's charts read few rows.
v4 (``V4``, see ``blocks``) keeps samples as compressed blocks of a minute per series.
v5 (see ``hist_blocks``) keeps the interval histograms as compressed blocks of a minute per series too.
"""

from __future__ import annotations

from .peaks import CREATE_PEAKS

APPLICATION_ID = 0x46494F4D  # "FIOM" in PRAGMA application_id: tells our files from other SQLite files

RUN_STATUSES = ("running", "complete", "stopped", "interrupted", "failed")
STEP_STATUSES = (*RUN_STATUSES, "skipped")
LEVELS = ("target", "worker", "manager", "all")
MESSAGE_LEVELS = ("info", "warning", "error")

# Scalar Metrics fields as stored in v1, in column order. Frozen: a new Metrics field needs a migration
# that adds its columns and extends METRIC_COLUMNS (a test checks every Metrics field is stored).
V1_METRIC_COLUMNS: tuple[tuple[str, str], ...] = (
    ("seconds", "REAL"),
    ("read_ios", "INTEGER"),
    ("write_ios", "INTEGER"),
    ("read_bytes", "INTEGER"),
    ("write_bytes", "INTEGER"),
    ("read_iops", "REAL"),
    ("write_iops", "REAL"),
    ("read_bps", "REAL"),
    ("write_bps", "REAL"),
    ("read_lat_sum_ns", "REAL"),
    ("write_lat_sum_ns", "REAL"),
    ("read_lat_n", "INTEGER"),
    ("write_lat_n", "INTEGER"),
    ("read_lat_max_ns", "REAL"),
    ("write_lat_max_ns", "REAL"),
    ("errors", "INTEGER"),
    ("usr_cpu", "REAL"),
    ("sys_cpu", "REAL"),
    ("disk_util", "REAL"),  # NULL where fio reports none
)
METRIC_COLUMNS = V1_METRIC_COLUMNS
# A samples row's values: the interval window's metrics (i_), then the whole window's (w_).
SAMPLE_VALUE_COLUMNS: tuple[str, ...] = (
    *(f"i_{n}" for n, _ in METRIC_COLUMNS),
    *(f"w_{n}" for n, _ in METRIC_COLUMNS),
)


def _in(values: tuple[str, ...]) -> str:
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


def _cols(columns: tuple[tuple[str, str], ...], prefix: str = "") -> str:
    # REAL affinity also stores whole-number floats as compact integers on disk (SQLite does this itself).
    return ",\n    ".join(
        f"{prefix}{name} {kind}" + ("" if name == "disk_util" else " NOT NULL DEFAULT 0")
        for name, kind in columns
    )


V1: tuple[str, ...] = (
    f"PRAGMA application_id = {APPLICATION_ID}",
    f"""CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    uuid        TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL CHECK (status IN {_in(RUN_STATUSES)}),
    started     TEXT NOT NULL,              -- UTC ISO 8601
    ended       TEXT,
    plan_name   TEXT NOT NULL DEFAULT '',
    plan_json   TEXT NOT NULL,              -- the plan document exactly as run
    plan_sha256 TEXT NOT NULL,              -- of plan_json's UTF-8 bytes
    notes       TEXT NOT NULL DEFAULT '',
    host_json   TEXT NOT NULL DEFAULT '{{}}', -- hostname, OS, CPUs, Python, Fiometer version
    owner_pid   INTEGER,                    -- the process recording the run: lets a dead one be spotted
    owner_host  TEXT,
    owner_token TEXT                        -- that process's start identity (guards against pid reuse)
)""",
    "CREATE INDEX runs_started ON runs(started)",
    "CREATE INDEX runs_running ON runs(status) WHERE status = 'running'",
    """CREATE TABLE run_tags (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    tag    TEXT NOT NULL COLLATE NOCASE,
    PRIMARY KEY (run_id, tag)
) WITHOUT ROWID""",
    "CREATE INDEX run_tags_tag ON run_tags(tag)",
    """CREATE TABLE managers (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    name        TEXT NOT NULL,
    address     TEXT NOT NULL DEFAULT 'local',  -- host:port of a fio server, or 'local'
    os          TEXT NOT NULL DEFAULT '',
    fio_version TEXT NOT NULL DEFAULT '',
    protocol    INTEGER,                        -- fio client/server protocol version; NULL when local
    UNIQUE (run_id, name)
)""",
    """CREATE TABLE workers (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL,
    position     INTEGER NOT NULL,
    manager      TEXT NOT NULL,
    key          TEXT NOT NULL,                 -- as the plan gives it
    name         TEXT NOT NULL DEFAULT '',
    details_json TEXT NOT NULL DEFAULT '{}',
    UNIQUE (run_id, manager, key),
    FOREIGN KEY (run_id, manager) REFERENCES managers(run_id, name) ON DELETE CASCADE
)""",
    """CREATE TABLE targets (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL,
    position     INTEGER NOT NULL,
    manager      TEXT NOT NULL,
    worker       TEXT NOT NULL,
    key          TEXT NOT NULL,
    name         TEXT NOT NULL DEFAULT '',
    path         TEXT NOT NULL DEFAULT '',      -- test file or device
    details_json TEXT NOT NULL DEFAULT '{}',    -- queue depth, size, direct I/O ...
    UNIQUE (run_id, manager, worker, key),
    FOREIGN KEY (run_id, manager, worker) REFERENCES workers(run_id, manager, key) ON DELETE CASCADE
)""",
    f"""CREATE TABLE steps (
    id                  INTEGER PRIMARY KEY,
    run_id              INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx                 INTEGER NOT NULL,
    spec_name           TEXT NOT NULL DEFAULT '',
    spec_text           TEXT NOT NULL DEFAULT '',
    queue_depth         INTEGER,
    active_workers_json TEXT NOT NULL DEFAULT '[]',
    active_targets_json TEXT NOT NULL DEFAULT '[]',
    ramp_s              REAL NOT NULL DEFAULT 0,
    run_s               REAL NOT NULL DEFAULT 0,
    started             TEXT NOT NULL,
    ended               TEXT,
    status              TEXT NOT NULL CHECK (status IN {_in(STEP_STATUSES)}),
    UNIQUE (run_id, idx)
)""",
    """CREATE TABLE step_outputs (
    step_id    INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    manager    TEXT NOT NULL,
    job_text   TEXT,                            -- the exact fio job file sent
    raw_output TEXT,                            -- fio's final output as received
    PRIMARY KEY (step_id, manager)
)""",
    f"""CREATE TABLE messages (
    id      INTEGER PRIMARY KEY,
    run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step_id INTEGER REFERENCES steps(id) ON DELETE CASCADE,
    at      TEXT NOT NULL,
    level   TEXT NOT NULL CHECK (level IN {_in(MESSAGE_LEVELS)}),
    manager TEXT,
    text    TEXT NOT NULL
)""",
    "CREATE INDEX messages_run ON messages(run_id)",
    "CREATE INDEX messages_step ON messages(step_id)",
    f"""CREATE TABLE series (
    id      INTEGER PRIMARY KEY,
    step_id INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    level   TEXT NOT NULL CHECK (level IN {_in(LEVELS)}),
    manager TEXT,                               -- NULL for ALL
    key     TEXT NOT NULL
)""",
    "CREATE UNIQUE INDEX series_identity ON series(step_id, level, ifnull(manager, ''), key)",
    f"""CREATE TABLE samples (
    series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
    t         REAL NOT NULL,                    -- seconds since the step started
    {_cols(V1_METRIC_COLUMNS, "i_")},
    {_cols(V1_METRIC_COLUMNS, "w_")},
    PRIMARY KEY (series_id, t)
)""",
    f"""CREATE TABLE results (
    series_id  INTEGER PRIMARY KEY REFERENCES series(id) ON DELETE CASCADE,
    {_cols(V1_METRIC_COLUMNS)},
    read_hist  TEXT,
    write_hist TEXT
)""",
)

# v2: samples keep the interval window's latency histograms, so a run's history can show percentiles per
# interval. NULL where not kept: by default only manager and ALL rows keep them (benchmarks/bench_store.py
# measured one job's histograms at ~10x the size of all its scalar columns).
V2: tuple[str, ...] = (
    "ALTER TABLE samples ADD COLUMN i_read_hist TEXT",
    "ALTER TABLE samples ADD COLUMN i_write_hist TEXT",
)


def _v3_samples(name: str) -> str:
    return f"""CREATE TABLE {name} (
    series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
    t         REAL NOT NULL,
    {_cols(V1_METRIC_COLUMNS, "i_")},
    {_cols(V1_METRIC_COLUMNS, "w_")},
    i_p99_ns  REAL,                             -- where the histograms are kept: their 99th percentile
    PRIMARY KEY (series_id, t)
) WITHOUT ROWID"""


SAMPLES_V3 = _v3_samples("samples_v3")
# The interval's histograms, where kept, beside the samples: a samples row stays small (they are stored
# clustered by series, so a series reads as a few pages) and a histogram never spills onto a page of
# its own.
SAMPLE_HISTS_V3 = """CREATE TABLE sample_hists (
    series_id  INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
    t          REAL NOT NULL,
    read_hist  BLOB,
    write_hist BLOB,
    PRIMARY KEY (series_id, t)
)"""
# The statements; ``compact.migrate_to_v3`` runs them and moves the data (it needs Python: histograms).
V3: tuple[str, ...] = (
    "ALTER TABLE series ADD COLUMN same_as INTEGER REFERENCES series(id) ON DELETE CASCADE",
    SAMPLES_V3,
    SAMPLE_HISTS_V3,
    CREATE_PEAKS,
)

# v4 (see ``blocks``): samples are kept as compressed blocks, one row per series per minute
# (``sample_blocks``); ``samples`` keeps only the rows not yet in a block (the last minute of a running
# step, or of a run whose recorder was killed). ``blocks.migrate_to_v4`` moves every row into blocks.
V4: tuple[str, ...] = (
    """CREATE TABLE sample_blocks (
    id        INTEGER PRIMARY KEY,
    series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
    t0        REAL NOT NULL,                    -- the block's first and last sample times
    t1        REAL NOT NULL,
    n         INTEGER NOT NULL,                 -- samples in the block
    data      BLOB NOT NULL                     -- blocks.BLOCK_COLUMNS, compressed
)""",
    # a rowid table: a block is a few KB, and a rowid table fills the overflow pages of long rows
    "CREATE INDEX sample_blocks_series ON sample_blocks(series_id, t0, t1, n)",
)
