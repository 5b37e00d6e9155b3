"""Feature package-skeleton: an importable `textkit` package with its metadata."""

import tomllib
from pathlib import Path

import textkit


def test_version():
    assert textkit.__version__ == "0.1.0"


def test_package_is_the_one_in_the_project():
    assert Path(textkit.__file__).resolve() == (Path.cwd() / "textkit" / "__init__.py").resolve()
    assert textkit.__doc__ and textkit.__doc__.strip(), "textkit/__init__.py needs a docstring"


def test_pyproject():
    data = tomllib.loads(Path("pyproject.toml").read_text(encoding="utf-8"))
    assert "build-backend" in data["build-system"]
    project = data["project"]
    assert project["name"] == "textkit"
    assert project["version"] == textkit.__version__
    assert project["requires-python"] == ">=3.11"
    assert project.get("dependencies", []) == [], "textkit uses the standard library only"
