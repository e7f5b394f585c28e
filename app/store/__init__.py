"""The results store: one SQLite file holding every run, step, interval sample and final result.

Write during a run with ``Recorder``; read history with the functions of ``queries``. Qt-free.
"""

from .database import Store, open_store
from .db_location import default_db_path_for, resolve_db_path
from .errors import RunNotFound, StoreError
from .queries import (
    ANY_MANAGER,
    annotate_run,
    delete_run,
    get_run,
    list_runs,
    rename_run,
    step_samples,
    step_series,
    tag_run,
)
from .recorder import Recorder, host_facts, plan_text_and_hash
from .records import (
    ManagerInfo,
    MessageInfo,
    ResultRow,
    Run,
    RunListing,
    SampleRow,
    StepInfo,
    StepOutput,
    TargetInfo,
    WorkerInfo,
)

__all__ = [
    "ANY_MANAGER",
    "ManagerInfo",
    "MessageInfo",
    "Recorder",
    "ResultRow",
    "Run",
    "RunNotFound",
    "RunListing",
    "SampleRow",
    "StepInfo",
    "StepOutput",
    "Store",
    "StoreError",
    "TargetInfo",
    "WorkerInfo",
    "annotate_run",
    "default_db_path_for",
    "delete_run",
    "get_run",
    "host_facts",
    "list_runs",
    "open_store",
    "plan_text_and_hash",
    "rename_run",
    "resolve_db_path",
    "step_samples",
    "step_series",
    "tag_run",
]
