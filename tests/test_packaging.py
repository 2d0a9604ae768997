"""What `pip install .` puts into someone's site-packages: one `conjure` name and nothing else
(no modules called `server`, `client` or `protocol`), with the data files the game reads, and
without the data-building scripts, which run only from a checkout."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The project's wheel, built from a copy (a build writes into its source folder)."""
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for name in ("protocol", "server", "client"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    out = base / "out"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(src)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (found,) = out.glob("conjure-*.whl")
    return found


def test_the_wheel_installs_one_name_with_its_data_and_no_build_scripts(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"conjure"}
    assert not any(n.startswith("conjure/__init__") for n in names)  # a namespace package
    for data in (
        "conjure/protocol/data/wordnet_nouns.txt.gz",
        "conjure/protocol/data/confusables.txt.gz",
        "conjure/protocol/data/default_deck.toml",
        "conjure/client/bots/data/vectors.npz",
        "conjure/client/bots/data/stoplist.txt",
        "conjure/client/bots/data/categories.json",
    ):
        assert data in names, data
    assert not [n for n in names if "databuild" in n or "build_" in n.rsplit("/", 1)[-1]]
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "conjure = conjure.client.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()


def test_the_installed_package_runs_from_its_own_files(wheel: Path, tmp_path: Path):
    """Installed into a folder of its own and run from elsewhere: the program and its data
    come from that folder, not from this checkout."""
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    probe = (
        "import conjure.client.cli as cli, conjure.protocol.words as w, conjure.server.app;"
        "import conjure.client.bots.worddata as d;"
        "print(cli.__file__, w.is_known_noun('apple'), len(d.load_data().words) > 1000)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    where, noun, vocabulary = done.stdout.split()
    assert Path(where).is_relative_to(target) and noun == vocabulary == "True"
