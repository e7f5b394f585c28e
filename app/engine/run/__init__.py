"""The step loop and its deadlines; the managers' endpoints; curve runs."""
