"""Remote managers' targets checked in one room: through fio on a plain ``fio --server`` (``files``), and by
the local rules themselves on an ``ssh://`` manager's host (``hold`` sends ``there``)."""
