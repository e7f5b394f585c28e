"""Leaves the other engine sub-packages share: fio's latency buckets, the message gate, ``ssh://`` addresses."""
