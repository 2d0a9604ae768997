"""Small pieces of wording both sides print: stars, signed points, counted nouns, lists of names.

Stated once here so that the server's feed, its audit and the client's screens word them alike.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (only for the type: the wording needs no messages at run time)
    from conjure.protocol.messages import View


def stars(n: int) -> str:
    """A category's stars as glyphs: ``★★★``."""
    return "★" * n


def signed(n: int) -> str:
    """Points with their sign: ``+2``, ``-1``, and a plain ``0`` (no ``+0``)."""
    return f"+{n}" if n > 0 else str(n)


def counted(k: int, noun: str) -> str:
    """``1 star``, ``3 stars``: a count with its noun, plural by adding ``s``."""
    return f"{k} {noun}" if k == 1 else f"{k} {noun}s"


def names_list(names: Sequence[str], empty: str = "") -> str:
    """'Ann', 'Ann and Bob', 'Ann, Bob and Cat'; ``empty`` when there are none."""
    if not names:
        return empty
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]


#: What a join command's name stands for, in every line that shows one to be copied.
NAME_PLACEHOLDER = "YOU"


def watch_command(url: str, room: str, program: str = "conjure") -> str:
    """The command that watches ``room``'s game as a spectator (a pinned server's certificate
    is remembered by the client that met it); ``program``: how this machine runs conjure, for a
    line run here (``protocol.program.program_here``)."""
    return f"{program} watch {url} --room {room}"


def not_on_path_note(program: str) -> str | None:
    """The line that follows join commands (``conjure play …``, for everyone's own machine) when
    this machine runs conjure by another path (``protocol.program.program_here``)."""
    if program == "conjure":
        return None
    return f"(on this machine, where conjure is not on the PATH: {program} play …)"


def join_command(
    url: str, *, room: str = "", pin: str = "", name: str = "", program: str = "conjure"
) -> str:
    """The command a player types to join: into ``room`` (a code, or ``CODE`` to fill in), or to
    make a room when ``room`` is empty; ``pin`` is the server's certificate fingerprint; ``name``
    the player's own (quoted for a shell), else the placeholder to put one for; ``program`` as
    for :func:`watch_command` (the default is the installed command of everyone else's machine)."""
    pinned = f" --pin {pin}" if pin else ""
    where = f"--room {room}" if room else "--create"
    who = shlex.quote(name) if name else NAME_PLACEHOLDER
    return f"{program} play {url}{pinned} --name {who} {where}"


def final_words(view: View) -> str:
    """Who won a finished game, and everyone's total as the final standings rank them: the
    sentence a player reads on leaving it (``make play`` and ``conjure play`` alike)."""
    ranked = sorted(view.players, key=lambda p: (-p.score, p.seat))
    # (no ★ for the winners: they are named, and ★ is what a match scores everywhere else)
    scores = ", ".join(f"{p.name} {p.score}" for p in ranked)
    if view.abandoned:
        return f"The game was abandoned, with no winner: {scores}."
    winners = names_list([p.name for p in ranked if p.seat in view.winners])
    verb = "wins" if len(view.winners) == 1 else "share the win"
    return f"Game over: {winners} {verb}. Totals: {scores}."
