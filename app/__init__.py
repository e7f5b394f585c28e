"""Fiometer: an Iometer-compatible storage benchmark on fio."""

__version__ = "0.1.0"
