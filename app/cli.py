"""The `fiometer` command."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fiometer", description="Iometer-compatible storage benchmark on fio")
    p.add_subparsers(dest="command")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command is None:
        build_parser().print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
