"""Running fio here (local_fio), on a fio server (fioproto), or over SSH; the Transport contract."""
