"""Stored runs: the History tab, stored-run replay, comparison and report dialogs."""
