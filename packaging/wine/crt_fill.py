"""Fiometer's Wine test bed only: point the modules that call UCRT complex math at a filler DLL.

Wine 8's ucrtbase exports crealf, csin, cpow … as stubs that abort when called, and numpy calls them
on import. Wine resolves ``api-ms-win-crt-math-l1-1-0.dll`` inside its loader (an API set), so no DLL
override can catch it; instead each module under ROOT that imports a complex function from it gets
that import renamed (same length, in place) to FILLER, a DLL built from crt_complex.c whose .def
file implements the complex functions and forwards every other name to ucrtbase.

usage: python3 crt_fill.py ROOT OUT.def     (prints the patched files; needs x86_64-w64-mingw32-objdump)
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

APISET = b"api-ms-win-crt-math-l1-1-0.dll"
FILLER = b"fiometer-wine-crtmath-fill.dll"  # the same length as APISET: replaced in place
COMPLEX = re.compile(
    r"^(c(exp|log|sqrt|sin|cos|tan|sinh|cosh|tanh|asin|acos|atan|asinh|acosh|atanh|onj|proj|"
    r"real|imag|abs|arg|pow)[fl]?)$"
)


def imports_of(path: Path) -> list[str]:
    """The names `path` imports from the API set (objdump -p's import table)."""
    out = subprocess.run(
        ["x86_64-w64-mingw32-objdump", "-p", str(path)], capture_output=True, text=True
    ).stdout
    names, inside = [], False
    for line in out.splitlines():
        if "DLL Name:" in line:
            inside = line.split("DLL Name:")[1].strip().lower() == APISET.decode()
        elif inside and re.match(r"^\s+[0-9a-f]+\s+\d+\s+\S+$", line):
            names.append(line.split()[-1])
    return names


def main(root: str, def_out: str) -> int:
    assert len(FILLER) == len(APISET)
    wanted: set[str] = set()
    for path in sorted(Path(root).rglob("*")):
        if path.suffix.lower() not in (".pyd", ".dll") or not path.is_file():
            continue
        data = path.read_bytes()
        if APISET not in data and FILLER not in data:
            continue
        names = imports_of(path)
        if not any(COMPLEX.match(n) for n in names):
            continue
        wanted.update(names)
        if APISET in data:
            path.write_bytes(data.replace(APISET, FILLER))
            print(f"crt_fill: {path}")
    lines = ["LIBRARY " + FILLER.decode(), "EXPORTS"]
    for name in sorted(wanted):
        lines.append(f"  {name} = fm_{name}" if COMPLEX.match(name) else f"  {name} = ucrtbase.{name}")
    Path(def_out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
