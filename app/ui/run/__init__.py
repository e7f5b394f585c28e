"""Running a plan: the run controller, the Results Display and its live charts."""
