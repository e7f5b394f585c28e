"""The repository stands alone: code and tests read nothing beside it, and the notes they cite are in docs/."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers import shared_dir

ROOT = Path(__file__).resolve().parents[2]
OUTSIDE = re.compile(r"\.\./shared|shared/(icf|fio-captures|iometer-results|reference)")
CITED = re.compile(r"\bdocs/[\w./-]+\.md")


def python_files() -> list[Path]:
    return [
        p
        for top in ("app", "icf_import", "tests", "benchmarks")
        for p in (ROOT / top).rglob("*.py")
        if "fixtures" not in p.parts
    ]


def test_no_code_reaches_for_a_folder_beside_the_repository():
    offenders = [
        str(p.relative_to(ROOT)) for p in python_files() if OUTSIDE.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_the_fixtures_folder_is_inside_the_repository_and_complete():
    fixtures = shared_dir()
    assert fixtures == ROOT / "tests" / "fixtures"
    for sub in ("icf", "icf/synthetic", "fio-captures", "iometer-results"):
        assert any((fixtures / sub).iterdir()), sub
    provenance = (fixtures / "PROVENANCE.md").read_text(encoding="utf-8")
    for path in (fixtures / "icf").rglob("*.icf"):
        assert f"`{path.name}`" in provenance, f"{path.name} has no provenance entry"


def test_every_note_the_code_cites_is_in_docs():
    cited = {m.group(0) for p in python_files() for m in CITED.finditer(p.read_text(encoding="utf-8"))}
    assert "docs/reference/iometer.md" in cited and "docs/design.md" in cited
    missing = sorted(c for c in cited if not (ROOT / c).is_file())
    assert missing == []
