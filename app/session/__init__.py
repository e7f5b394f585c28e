"""One run, one home: the run session (runner, store recorder, Iometer's files), used by the CLI and the window
alike, on a thread or in a process of its own (run_apart starts run_apart_child). Qt-free, below the window."""
