"""No user message names a module (issue 36.6: a warning said "(...: app.engine.remote.files)").

Every string literal under app/ and icf_import/ (docstrings aside) is searched for a dotted module path;
a literal that is nothing but a module's name (what importlib or ``-m`` is given) is no message."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODULE_PATH = re.compile(r"\b(?:app|icf_import)\.[a-z_]+(?:\.[a-z_]+)*")
CODE_NOT_MESSAGES = {("app/engine/remote/hold.py", "BOOT")}  # Python sent to an ssh:// host


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _code_constants(tree: ast.AST, rel: str) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for t in node.targets:
                if isinstance(t, ast.Name) and (rel, t.id) in CODE_NOT_MESSAGES:
                    out.add(id(node.value))
    return out


def module_paths_in_strings(root: Path) -> list[str]:
    found = []
    for folder in ("app", "icf_import"):
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"))
            skip = _docstrings(tree) | _code_constants(tree, rel)
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in skip:
                    continue
                text = node.value
                if re.fullmatch(r"[a-z_]+(?:\.[a-z_]+)*", text):  # a module's name given to importlib / -m
                    continue
                if m := MODULE_PATH.search(text):
                    found.append(f"{rel}:{node.lineno}: {m.group(0)} in {text[:80]!r}")
    return found


def test_no_user_message_names_a_module() -> None:
    assert module_paths_in_strings(ROOT) == []


def test_the_search_finds_a_module_named_in_a_message(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "icf_import").mkdir()
    (tmp_path / "app" / "m.py").write_text(
        '"""Docstrings may name app.engine.guards."""\n'
        'NAME = "app.engine.run.runner"\n'
        'def f(path):\n    return f"cannot verify {path} (see: app.engine.remote.files)"\n'
    )
    assert module_paths_in_strings(tmp_path) == [
        "app/m.py:4: app.engine.remote.files in ' (see: app.engine.remote.files)'"
    ]
