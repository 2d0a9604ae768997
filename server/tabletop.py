"""``conjure score``: settle a tabletop round typed in as a TOML sheet, with the engine's scoring.

A sheet names the players in seat order, the conjurer, the marked boards, the spell and summoning
words and any rulings the table made in review. Broken sheets are reported on stderr, naming the file
and the field; the good ones are still scored, and the exit status is then 2. ``--house-rule NAME``
(docs/RULES.md, House rules) also scores each sheet by that reading, beside the official score.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conjure.protocol.counts import MAX_PLAYERS, MIN_PLAYERS, crystal_range
from conjure.protocol.house import canonical
from conjure.protocol.names import name_keys, name_problem
from conjure.protocol.text import escape_unshown
from conjure.protocol.wording import stars
from conjure.protocol.words import validate_written
from conjure.server.audit import print_report, shown
from conjure.server.house import add_house_argument, house_json, house_round_lines
from conjure.server.keyfiles import NotKeptFile, read_kept
from conjure.server.rules.explain import explain_round, result_json
from conjure.server.rules.scoring import RoundSheet, score_round

TOP_KEYS = {
    "variant",
    "stars",
    "category",
    "players",
    "conjurer",
    "marked",
    "spell",
    "summon",
    "rulings",
}


class SheetError(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"field `{field}`: {message}")
        self.field = field


@dataclass(frozen=True)
class Sheet:
    path: str
    category: str | None
    round: RoundSheet[str]


def _str_list(doc: dict[str, Any], key: str, default: list[str] | None = None) -> list[str]:
    value = doc.get(key, default)
    if value is None:
        raise SheetError(key, "is missing")
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise SheetError(key, "must be a list of names")
    return value


def _words(doc: dict[str, Any], key: str, players: list[str]) -> dict[str, str]:
    table = doc.get(key, {})
    if not isinstance(table, dict):
        raise SheetError(key, "must be a table of player = word")
    for who, word in table.items():
        if who not in players:
            raise SheetError(f"{key}.{who}", f"{who!r} is not one of the players")
        if not isinstance(word, str):
            raise SheetError(f"{key}.{who}", "must be a string")
        problem = validate_written(word)
        if problem:
            raise SheetError(f"{key}.{who}", problem)
    return dict(table)


def parse_sheet(doc: dict[str, Any], path: str = "sheet") -> Sheet:
    """Validate a parsed TOML sheet against the rules of a round; raise SheetError naming the field."""
    unknown = set(doc) - TOP_KEYS
    if unknown:
        raise SheetError(sorted(unknown)[0], "is not a field of a round sheet")
    variant = doc.get("variant", "standard")
    if variant not in ("standard", "dark-magic"):
        raise SheetError("variant", f'must be "standard" or "dark-magic", not {variant!r}')
    n_stars = doc.get("stars")
    if not isinstance(n_stars, int) or isinstance(n_stars, bool) or not 1 <= n_stars <= 3:
        raise SheetError("stars", f"must be 1, 2 or 3, not {n_stars!r}")
    category = doc.get("category")
    if category is not None and not isinstance(category, str):
        raise SheetError("category", "must be a string")
    players = _str_list(doc, "players")
    if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise SheetError(
            "players", f"a round has {MIN_PLAYERS} to {MAX_PLAYERS} players, not {len(players)}"
        )
    for p in players:  # as the server seats names: no unshown character, none to pass off
        if (problem := name_problem(p)) is not None:
            raise SheetError("players", f"{escape_unshown(p)!r}: {problem}")
    keys = [key for p in players for key in name_keys(p)]
    if len(set(keys)) != len(keys):  # "Ann" and a Cyrillic "Аnn" were scored as two players
        raise SheetError("players", "names must be different, and no two may look alike")
    conjurer = doc.get("conjurer")
    if conjurer not in players:
        raise SheetError("conjurer", f"{conjurer!r} is not one of the players")
    marked = _str_list(doc, "marked", [])
    for m in marked:
        if m not in players:
            raise SheetError("marked", f"{m!r} is not one of the players")
    if len(set(marked)) != len(marked):
        raise SheetError("marked", "a board holds at most one crystal")
    low, high = crystal_range(variant)
    if not low <= len(marked) <= high:
        raise SheetError(
            "marked", f"a {variant} round marks {low} to {high} boards, not {len(marked)} (S3, D3)"
        )
    spell = _words(doc, "spell", players)
    summon = _words(doc, "summon", players)
    if variant == "dark-magic" and conjurer in spell:
        raise SheetError(f"spell.{conjurer}", "the Dark Magic conjurer writes no spell word (D2)")
    for m in marked:
        if m not in spell:
            raise SheetError("marked", f"{m} has no spell word to mark (S3)")
    rulings = doc.get("rulings", {})
    if not isinstance(rulings, dict):
        raise SheetError("rulings", "must be a table")
    bad = set(rulings) - {"invalid", "same"}
    if bad:
        raise SheetError(f"rulings.{sorted(bad)[0]}", "is not a kind of ruling")
    invalid = _str_list(rulings, "invalid", [])
    for who in invalid:
        if who not in players:
            raise SheetError("rulings.invalid", f"{who!r} is not one of the players")
        if who not in summon:
            raise SheetError("rulings.invalid", f"{who} wrote no summoning word")
    same_raw = rulings.get("same", [])
    if not isinstance(same_raw, list) or not all(
        isinstance(x, list) and len(x) == 2 and all(isinstance(w, str) for w in x) for x in same_raw
    ):
        raise SheetError("rulings.same", "must be a list of pairs of words")
    return Sheet(
        path=path,
        category=category,
        round=RoundSheet(
            variant=variant,
            stars=n_stars,
            players=players,
            conjurer=conjurer,
            marked=frozenset(marked),
            spell=spell,
            summon=summon,
            ruled_invalid={who: "" for who in invalid},
            same=[(a, b) for a, b in same_raw],
            names={p: p for p in players},
        ),
    )


def load_sheet(path: Path) -> Sheet:
    try:
        raw, _mode = read_kept(path, SHEET_MOST)
    except NotKeptFile:
        raise SheetError("file", f"is not a regular file of at most {SHEET_MOST:,} bytes") from None
    except OSError as exc:
        raise SheetError("file", f"cannot read it ({exc.strerror})") from None
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise SheetError("file", "is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise SheetError("file", f"is not valid TOML ({exc})") from None
    except RecursionError:
        raise SheetError("file", "is nested too deep to be a round sheet") from None
    return parse_sheet(doc, str(path))


#: A round sheet is a few hundred bytes: more is no sheet (and a FIFO would hang the read).
SHEET_MOST = 1 << 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "sheets", nargs="+", metavar="SHEET.toml", type=Path, help="round sheets to score, in order"
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object per sheet, one per line"
    )
    add_house_argument(parser)


def run(args: argparse.Namespace) -> int:
    status = 0
    for path in args.sheets:
        try:
            sheet = load_sheet(path)
        except SheetError as exc:
            print(shown(f"conjure score: {path}: {exc}"), file=sys.stderr)
            status = 2
            continue
        result = score_round(sheet.round)
        house = score_round(sheet.round, args.house_rule) if args.house_rule else None
        if args.json:
            doc = {
                "sheet": str(path),
                "category": sheet.category,
                "stars": sheet.round.stars,
                "variant": sheet.round.variant,
                "conjurer": sheet.round.conjurer,
            }
            doc.update(result_json(sheet.round, result))
            if house is not None:
                doc["house_rules"] = canonical(house.house)
                doc["house"] = house_json(sheet.round, house)
            print(shown(json.dumps(doc, ensure_ascii=False)))
        else:
            # Shown safely and fitted to the terminal, as conjure replay's report: a name or a
            # category with a terminal escape drove the terminal, and lines broke mid-word.
            r = sheet.round
            title = f"{sheet.category or 'Category'} {stars(r.stars)} ({r.variant})"
            lines = [f"== {path}: {title}, conjurer {r.conjurer}", *explain_round(r, result)]
            if house is not None:
                lines += house_round_lines(r, result, house)
            print_report("\n".join(lines) + "\n")
    return status
