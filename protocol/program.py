"""The command that runs Conjure on this machine, for the lines a person copies to run it again.

``conjure`` when that is what the shell finds; else the path this program was started by: after
``make play`` the command is ``.venv/bin/conjure``, and a newcomer who copied a printed
``conjure play …`` line met "command not found". The lines other people copy on their own
machines keep ``conjure`` (the installed command; README, "Playing with friends").
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

NAME = "conjure"


def _same(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _as_typed(path: Path) -> str:
    """``path`` relative to the working folder when it is inside it (as a person types it),
    quoted for a shell (a folder "my games" made the command "my")."""
    try:
        whole = path.resolve()
        here = Path.cwd().resolve()
    except OSError:  # the working folder is gone: the path as it was given
        return shlex.quote(str(path))
    try:
        inside = whole.relative_to(here)
    except ValueError:
        return shlex.quote(str(whole))
    # (a bare name is looked up on the PATH: "./conjure")
    return shlex.quote(str(inside) if len(inside.parts) > 1 else f"./{inside}")


def program_here() -> str:
    """How to start ``conjure`` from here: ``conjure`` if the shell finds this very program by
    that name, else its path (the console script beside this interpreter)."""
    started = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    candidates = [p for p in (started, Path(sys.executable).with_name(NAME)) if p is not None]
    ours = next((p for p in candidates if p.name == NAME and p.is_file()), None)
    found = shutil.which(NAME)
    if ours is None:
        return NAME  # run some other way (a test, python -m without the script): the name
    if found is not None and _same(found, ours):
        return NAME
    return _as_typed(ours)
