"""Only what pyproject.toml cannot say: the top-level ``resources/`` folder (the design card's layout)
ships inside the package as ``app/resources`` (wheel and installs; ``app.paths.resources_dir`` finds
either). Everything else is in pyproject.toml."""

from pathlib import Path

from setuptools import find_packages, setup

RESOURCES = Path(__file__).resolve().parent / "resources"
resource_packages = [
    "app.resources",
    *(f"app.resources.{d.name}" for d in sorted(RESOURCES.iterdir()) if d.is_dir()),
]

setup(
    packages=[*find_packages(include=["app", "app.*", "icf_import", "icf_import.*"]), *resource_packages],
    package_dir={"app.resources": "resources"},
    package_data={p: ["*"] for p in resource_packages},
)
