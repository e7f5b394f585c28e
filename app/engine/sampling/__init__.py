"""fio's reports into samples and metrics; disk and host counters; report checks."""
