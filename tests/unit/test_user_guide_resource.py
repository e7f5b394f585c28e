"""Help > User guide shows the guide shipped with the resources: it must be the docs' guide, word for word."""

from __future__ import annotations

from pathlib import Path

from app.paths import user_guide

ROOT = Path(__file__).resolve().parents[2]


def test_the_bundled_user_guide_is_the_docs_guide() -> None:
    shipped = user_guide()
    assert shipped.is_file()
    assert shipped.read_text(encoding="utf-8") == (ROOT / "docs" / "user-guide.md").read_text(
        encoding="utf-8"
    ), "resources/docs/user-guide.md differs from docs/user-guide.md: cp docs/user-guide.md resources/docs/"
