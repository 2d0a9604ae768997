"""What the screen shows: pure functions from a Session to prompt_toolkit formatted text.

Layout, top to bottom (see ``client.app``): a header (room, round, conjurer, category, phase,
countdown), the *middle* and, under it, a status line (connection banner, warnings, errors), the
input line and a one-line key help. The middle is drawn here line by line for the exact space it
has (:func:`middle`): the boards (one row per player in that player's colour), a panel that
depends on the phase (the settings form, the lobby, the categories, the challenge menu, the
proposals, the standings), and the feed, which scrolls back (PgUp/PgDn). Every line is given a
priority, and what does not fit is left out by whole lines, least needed first, so that the
layout fits 80x24 with 3 to 8 players. A *card* (a round's results, the help, how to play) takes
the whole middle until it is closed.

Nothing is cut mid-word: long texts are wrapped at spaces or shortened on purpose
(``client.textfit``).
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.styles import Style

from conjure.client.prompts import QUOTED, quoted
from conjure.client.session import Session, settings_lines
from conjure.client.statefile import ENV_SHARE_URL
from conjure.client.tablestate import status_rows
from conjure.client.textfit import cells, pad, shorten, wrap, wrap_items
from conjure.client.texts import (
    CONJURER_SUMMONING_WORD,
    HELP,
    HELP_SPECTATOR,
    HOWTO_SHORT,
    HOWTO_SHORT_DARK,
    SPELL_WORD,
    SUMMONING_WORD,
    WATCHED_SUMMONING_WORD,
    howto_for,
)
from conjure.protocol.cells import ljust
from conjure.protocol.counts import MAX_PLAYERS, MIN_PLAYERS, crystal_range
from conjure.protocol.events import CASE_TEXT, RULE_TEXT
from conjure.protocol.messages import PlayerView, ProposalView, ResultView, View
from conjure.protocol.program import program_here
from conjure.protocol.wording import join_command, names_list, stars, watch_command
from conjure.protocol.words import contains_written

PHASE_NAMES = {
    "lobby": "lobby",
    "choose": "choosing a category",
    "dark-commit": "secret word",
    "spell": "spell words",
    "mark": "crystals",
    "commit": "summoning",
    "reveal": "reveal",
    "review": "review",
    "over": "game over",
}

COLOUR_STYLES = {
    "red": "ansired",
    "blue": "ansibrightblue",
    "green": "ansigreen",
    "yellow": "ansiyellow",
    "purple": "ansimagenta",
    "orange": "#ff8700",
    "cyan": "ansicyan",
    "pink": "#ff87d7",
}

#: One screen line: fragments, no newline (prompt_toolkit's own type, so lines are its lines).
Line = StyleAndTextTuples


@dataclass
class Row:
    """A line of the middle and how much it matters: 0 must show, 3 shows if there is room.

    Lines of one ``group`` (a wrapped paragraph) are shown together or not at all.
    """

    line: Line
    prio: int = 0
    group: int = 0


_groups = itertools.count(1)


def no_color() -> bool:
    return bool(os.environ.get("NO_COLOR"))


def make_style(colour: bool | None = None) -> Style:
    """The app's style; without colour (NO_COLOR) only bold, underline and reverse remain."""
    if colour is None:
        colour = not no_color()
    rules: list[tuple[str, str]] = [
        ("header", "reverse bold"),
        ("rule", ""),
        ("you", "bold"),
        ("dim", ""),
        ("title", "bold underline"),
        ("banner", "reverse bold"),
        ("status.error", "bold"),
        ("status.warn", "bold"),
        ("status.info", ""),
        ("prompt", "bold"),
        ("help", ""),
        ("pending", "bold"),
        ("winner", "bold"),
        ("feed.error", "bold"),
        ("turn", "reverse bold"),
    ]
    if colour:
        rules += [
            ("header", "bg:ansiblue fg:ansiwhite bold noreverse"),
            ("dim", "fg:ansibrightblack"),
            ("banner", "bg:ansired fg:ansiwhite bold noreverse"),
            ("status.error", "fg:ansired bold"),
            ("status.warn", "fg:ansiyellow bold"),
            ("status.info", "fg:ansigreen"),
            ("prompt", "fg:ansicyan bold"),
            ("help", "fg:ansibrightblack"),
            ("pending", "fg:ansiyellow bold"),
            ("feed.chat", "fg:ansicyan"),
            ("feed.error", "fg:ansired"),
            ("feed.me", "fg:ansigreen"),
            ("countdown.low", "fg:ansired bold"),
            ("turn", "bg:ansiyellow fg:ansiblack bold noreverse"),
            ("ok", "fg:ansigreen"),
            ("bad", "fg:ansired"),
        ]
        rules += [(f"player.{name}", f"fg:{value}") for name, value in COLOUR_STYLES.items()]
    return Style(rules)


def fit(text: str, width: int) -> str:
    """Exactly ``width`` cells: shortened on purpose (never mid-word), or padded."""
    return pad(text, width)


def clock(seconds: float) -> str:
    s = int(seconds + 0.999)
    return f"{s // 60}:{s % 60:02d}"


def _rows(style: str, text: str, width: int, prio: int = 0, indent: str = "", hang: str = "  "):
    group = next(_groups)
    return [Row([(style, t)], prio, group) for t in wrap(text, width, indent, hang)]


def _join(lines: list[Line]) -> StyleAndTextTuples:
    out: StyleAndTextTuples = []
    for i, line in enumerate(lines):
        out.extend(line)
        if i < len(lines) - 1:
            out.append(("", "\n"))
    return out


def _joined(rows: list[Row]) -> StyleAndTextTuples:
    out: StyleAndTextTuples = []
    for r in rows:
        out.extend(r.line)
        out.append(("", "\n"))
    return out


def plain(fragments: StyleAndTextTuples) -> str:
    return "".join(text for _, text, *_ in fragments)


def line_cells(line: Line) -> int:
    return cells(plain(line))


# ------------------------------------------------------------------ header


def header(session: Session, width: int = 80) -> StyleAndTextTuples:
    """One line; parts that do not fit are left out whole (least needed first)."""
    v = session.view
    #: (drop order: higher goes first, text), display order; the category also has its stars,
    #: which stay whole when its text is shortened
    parts: list[tuple[int, str] | tuple[int, str, str]] = []
    if width >= 100:
        parts.append((9, "Conjure"))
    out = v is not None and session.left_room()  # a table the player is no longer at
    if v is not None and out:
        parts.append((0, f"room {v.room}"))
    elif v is not None:
        # Once the game is on, the parts that come and go with the phase's name (the room and
        # the variant) go last, so that nothing else moves when they do: seen at 80x24, the
        # round jumped ten columns as the room code came back for the review.
        extras: list[tuple[int, str] | tuple[int, str, str]] = [(5, f"room {v.room}")]
        if v.settings.variant == "dark-magic":
            extras.append((4, "Dark Magic"))
        if v.phase == "lobby":
            parts += extras
        if v.phase != "lobby" and v.rounds:
            parts.append((1, f"round {v.round}/{v.rounds}"))
        if v.conjurer is not None and v.phase not in ("lobby", "over"):
            parts.append((_CONJURER, f"conjurer {session.pname(v.conjurer)}"))
        if v.card is not None and v.phase not in ("lobby", "over"):
            parts.append((CATEGORY, v.card.text, f" {stars(v.card.stars)}"))
        parts.append((0, PHASE_NAMES.get(v.phase, v.phase)))
        if v.phase != "lobby":
            parts += extras[::-1]  # the variant before the room: the room goes first
    elif session.room:
        parts.append((0, f"room {session.room}"))
    elif session.create:
        parts.append((0, "new room"))
    if not parts:
        parts.append((0, "Conjure"))
    right = ""
    style_right = "class:header"
    if out:
        pass  # no clock of a game this player is out of
    elif v is not None and v.paused:
        right = " ⏸ paused "
    else:
        remaining = session.remaining()
        if remaining is not None:
            right = f" ⏱ {clock(remaining)} "
            if remaining < 10:
                style_right = "class:header class:countdown.low"
    room = width - cells(right) - 1
    # While a card is on the table, what fits is decided as if the phase's name and the clock
    # were their longest: else the conjurer came and went with the phase (seen by review: at 80
    # columns "spell words" dropped them where "crystals" kept them).
    reserve = 0
    if v is not None and v.card is not None and v.phase in _CARD_PHASES and not out:
        reserve = _CARD_PHASE_W - cells(PHASE_NAMES[v.phase]) + max(0, _RIGHT_W - cells(right))
    left = _fit_parts(parts, room - reserve)
    return [("class:header", " " + left + " " * (room - cells(left))), (style_right, right)]


#: The phases in which the header shows the round's card, the longest of their names, and the
#: widest the header's right end gets (the clock of ten minutes or more, or "paused").
_CARD_PHASES = ("dark-commit", "spell", "mark", "commit", "reveal", "review")
_CARD_PHASE_W = max(cells(PHASE_NAMES[p]) for p in _CARD_PHASES)
_RIGHT_W = max(cells(" ⏸ paused "), cells(" ⏱ 10:00 "))


#: The category's place in the header's drop order, and how short its text may become: never
#: shortened to keep the room or the variant, down to ``_CATEGORY_SHORT`` cells to keep the
#: conjurer, then down to ``_CATEGORY_SHORTEST`` before it goes (seen at 80x24: a long category
#: took the conjurer's place, and lost its stars).
CATEGORY = 2
_CONJURER = 3
_CATEGORY_SHORT, _CATEGORY_SHORTEST = 16, 12


def _fit_parts(
    parts: list[tuple[int, str] | tuple[int, str, str]], width: int, sep: str = " · "
) -> str:
    items = [(p[0], p[1], p[2] if len(p) == 3 else "") for p in parts]

    def joined(items: list[tuple[int, str, str]]) -> str:
        return sep.join(text + tail for _, text, tail in items)

    while True:
        cat = next((i for i, p in enumerate(items) if p[0] == CATEGORY), None)
        if cat is None:
            text = joined(items)
            if cells(text) <= width or len(items) <= 1:
                return shorten(text, width)
        else:
            order, words, tail = items[cat]
            rest = items[:cat] + items[cat + 1 :]
            room = width - cells(tail) - (cells(joined(rest)) + len(sep) if rest else 0)
            worst = max((p[0] for p in rest), default=CATEGORY)
            floor = (
                cells(words)  # the room and the variant never cost the category a letter
                if worst > _CONJURER
                else _CATEGORY_SHORT
                if worst > CATEGORY
                else _CATEGORY_SHORTEST
            )
            if cells(words) <= room or room >= floor:
                shown = [*items[:cat], (order, shorten(words, room), tail), *items[cat + 1 :]]
                return shorten(joined(shown), width)
            if not rest:
                return shorten(words + tail, width)
        del items[max(range(len(items)), key=lambda i: (items[i][0], i))]


# ------------------------------------------------------------------ boards


def _summon_cell(session: Session, p: PlayerView) -> tuple[str, str]:
    v = session.view
    assert v is not None
    if p.summon is not None:
        text = p.summon
        if p.valid is True:
            return text + MARK_OK, "class:ok"
        if p.valid is False:
            return text + MARK_BAD, "class:bad"
        return text, ""
    mine = p.seat == v.you
    if p.committed:
        word = session.my_word() if mine else None
        if v.phase == "reveal":
            if p.revealed:
                return (f"{word} (revealed)" if word else "revealed"), ""
            if not p.connected:  # (it said "revealing…" of one who was away: found by review)
                return (f"{word} (not revealed)" if word else "locked in, not revealed"), ""
            return (f"{word} (revealing…)" if word else "locked in, revealing…"), ""
        return (f"{word} · locked in" if word else "locked in"), "class:ok"
    if v.phase == "commit" and any(s.seat == p.seat for s in session.summoners()):
        return "thinking…", "class:dim"
    if v.phase == "dark-commit" and p.seat == v.conjurer:
        return "thinking…", "class:dim"
    if v.phase in ("review", "over") and session.active(p):
        return "—", "class:dim"
    return "", ""


MARK_OK, MARK_BAD = " ✓", " ✗ invalid"
DARK_CONJURER_WORD = "✓ written before the spell words, so they do not bind it"


def _unbound_by_spells(v: View, p: PlayerView) -> bool:
    """The Dark Magic conjurer's shown word holds a spell word, and stands (D5)."""
    if v.settings.variant != "dark-magic" or p.seat != v.conjurer or not p.summon:
        return False
    return any(q.spell and contains_written(p.summon, q.spell) for q in v.players)


def _cell(text: str, width: int) -> str:
    """A board cell: shortened on purpose (a verdict mark stays whole), one space after it."""
    for mark in (MARK_OK, MARK_BAD):
        if text.endswith(mark) and cells(text) > width - 1:
            word = text[: -len(mark)]
            mark = mark if width - 1 - cells(mark) >= 6 else mark[:2]
            return pad(shorten(word, width - 1 - cells(mark)) + mark, width)
    return pad(shorten(text, width - 1), width)


#: The presence column's width once a game is under way: its usual words and two spaces (with
#: one, "done breakfast" read as a spell word at 80x24).
PRESENCE_W = len("removed  ")  # the longest word of the column: it moved as a seat was skipped
#: The cells a round's spell word column keeps from its start (most spell words fit).
SPELL_ROOM = 20


def _presence(p: PlayerView, v: View) -> str:
    if p.kicked:  # (the host removed them: "left" said they went of their own accord)
        return "removed"
    if v.phase == "over":  # who went once it was over did not leave the game (seen at 80x24:
        return ""  # every computer player "away" on the final board)
    if p.skipped:
        return "skipped"
    if not p.connected:
        return "away"
    if v.phase == "review" and p.done:
        return "done"
    return ""


def _shrink(widths: list[int], mins: list[int], over: int) -> list[int]:
    """Take ``over`` cells from the widest columns, never below their minimum."""
    widths = list(widths)
    while over > 0:
        i = max(range(len(widths)), key=lambda k: widths[k] - mins[k])
        if widths[i] <= mins[i]:
            break
        widths[i] -= 1
        over -= 1
    return widths


#: A computer player's seat (its client said so in hello: ``messages.COMPUTER``). A friend who
#: joined a table ``make play`` filled could not tell the programs from the people.
COMPUTER_TAG = "⚙"


def _name_cell(name: str, tags: str, width: int) -> str:
    """The name shortened on purpose, its tags (⚙ ✦ ♛) whole, one space after it all."""
    room = width - 1 - (cells(tags) + 1 if tags else 0)
    return pad(" ".join([shorten(name, max(3, room)), *([tags] if tags else [])]), width)


def board_rows(session: Session, width: int = 80) -> list[Row]:
    """The column titles (1), one row per player (0), their notes (2) and the legend (3)."""
    v = session.view
    if v is None or session.left_room():  # a board the player is no longer at
        return []
    pending = session.marks if v.phase == "mark" and session.is_conjurer() else set()
    cols = []
    for p in v.players:
        tags = [COMPUTER_TAG] if p.computer else []
        if v.conjurer == p.seat and v.phase not in ("lobby", "over"):
            tags.append("✦")
        if v.host == p.seat:
            tags.append("♛")
        label = " ".join([p.name, *tags])
        spell = p.spell or ""
        if not spell and v.phase == "spell" and v.turn == p.seat:
            spell = "✎ writing…"
        elif not spell and p.passed:
            spell = "(no word)"  # ("passed" read as a choice, of a player whose time ran out)
        summon, sstyle = _summon_cell(session, p)
        cols.append((p, label, _presence(p, v), spell, summon, sstyle, " ".join(tags)))
    score_w = max([len("points")] + [len(str(p.score)) for p in v.players]) + 1
    # Room for the widest tags anyone may carry in this phase, kept whoever carries them: the
    # word columns moved as the conjurer's ✦ went from a short name to a long one (seen at 80x24).
    # The ⚙ mark's room is kept too, for every name, once a computer has sat at the table: the
    # column narrowed as a person took a computer's seat back.
    tag_w = cells(" ✦ ♛") if v.phase not in ("lobby", "over") else cells(" ♛")
    tag_w += cells(" " + COMPUTER_TAG) if session.computers_seen else 0
    name_w = (
        max(
            [cells("player")]
            + [cells(c[1]) for c in cols]
            + [cells(p.name) + tag_w for p in v.players]
        )
        + 1
    )
    # Room for "done", "away", "skipped" or "removed" kept from the start: seen at 80x24, the
    # word columns jumped sideways as the first player said they were done, or one was skipped.
    pres_w = max([0 if v.phase == "lobby" else PRESENCE_W] + [cells(c[2]) + 2 for c in cols])
    spell_w = max([cells("spell word")] + [cells(c[3]) for c in cols]) + 1
    summon_w = max([cells("summoning word")] + [cells(c[4]) for c in cols]) + 1
    fixed = 3 + pres_w + 2 + score_w
    # Room for a spell word of SPELL_ROOM cells kept through a round, where the screen has it
    # to spare: the summoning words jumped eight columns as the spell phase's words came in
    # (seen at 80x24). Only from the slack: a long name is never cut for blank room.
    if v.phase not in ("lobby", "over"):
        slack = width - (fixed + name_w + spell_w + max(cells("summoning word") + 1, summon_w))
        spell_w = max(spell_w, min(SPELL_ROOM + 1, spell_w + max(0, slack)))
    name_w, spell_w, summon_w = _shrink(
        [name_w, spell_w, summon_w], [9, 11, 14], fixed + name_w + spell_w + summon_w - width
    )
    summon_w = max(summon_w, width - fixed - name_w - spell_w)  # the rest, if any is left
    out: list[Row] = []
    head = (
        "   "
        + pad("player", name_w)
        + " " * pres_w
        + pad("spell word", spell_w)
        + "  "
        + pad("summoning word", summon_w)
        + "points".rjust(score_w)
    )
    out.append(Row([("class:dim", head.rstrip())], 1))
    for p, _label, pres, spell, summon, sstyle, tags in cols:
        style = f"class:player.{p.colour}"
        if p.you:
            style += " class:you"
        if p.marked:
            crystal, cstyle = "◆", style
        elif p.seat in pending:
            crystal, cstyle = "◇", "class:pending"
        else:
            crystal, cstyle = " ", style
        row: Line = [
            (style, f"{'▶' if p.you else ' '}{p.seat + 1} " + _name_cell(p.name, tags, name_w)),
            ("class:dim" if pres in ("away", "removed", "skipped") else style, pad(pres, pres_w)),
            (style, _cell(spell, spell_w)),
            (cstyle, crystal + " "),
            (sstyle or style, _cell(summon, summon_w)),
            (style, str(p.score).rjust(score_w)),
        ]
        out.append(Row(row, 0))
        notes = []
        if p.invalid_reason:
            notes.append(("class:bad", f"✗ {p.invalid_reason}"))
        elif _unbound_by_spells(v, p):
            # A newcomer saw their "high heels" invalid for holding "heel" and the Dark Magic
            # conjurer's own "high heels" ✓ beside it, with nothing to say why.
            notes.append(("class:dim", DARK_CONJURER_WORD))
        for flag in p.flags:
            notes.append(("class:dim", f"⚑ {flag}"))
        for nstyle, text in notes:
            out += _rows(nstyle, text, width, 2, indent="      ", hang="        ")
    items = ["▶ you"] if v.you is not None else []
    if v.phase not in ("lobby", "over"):  # none then
        items.append("✦ conjurer")
    items += ["♛ host", "◆ crystal"]
    if any(p.computer for p in v.players):
        items.append(f"{COMPUTER_TAG} computer")
    if pending:
        items.append("◇ your pending crystal")
    if any(p.summon is not None and p.valid is True for p in v.players):
        items.append("✓ valid word")  # (a newcomer wondered why words that scored 0 had it)
    if any(p.summon is not None and p.valid is False for p in v.players):
        items.append("✗ invalid: -3")
    if any(p.flags for p in v.players):
        items.append("⚑ worth a look in the review")  # (a newcomer read it beside a ✓)
    # A line each, kept in order while they fit: the first alone where two do not.
    out += [
        Row([("class:dim", line)], 3, next(_groups))
        for line in wrap_items(items, width, " · ", "   ", "   ")
    ]
    return out


def boards(session: Session, width: int = 80) -> StyleAndTextTuples:
    return _joined(board_rows(session, width))


# ------------------------------------------------------------------ results and standings


def _matched_conjurer(r: ResultView) -> list[int]:
    return [s for s, pts in r.reasons.items() if any(p.rule == "P2b" for p in pts)]


def case_text(session: Session, r: ResultView) -> str:
    """How the round ended, named as the feed names it, with who matched whom."""
    case = CASE_TEXT.get(r.case, r.case)
    if r.case == "void" and r.reason:
        return f"{case}: {r.reason}"
    if r.case == "conjured":
        who = names_list([session.pname(s) for s in sorted(_matched_conjurer(r))])
        if who:  # the case said with its names
            return f"{who} matched the conjurer {session.pname(r.conjurer)}"
    if r.case == "failed":
        return f"{case}: no two words matched"
    return case


def result_rows(session: Session, r: ResultView, width: int = 80) -> list[Row]:
    """A round's result: the case, then every player's points and every reason, whole."""
    card = f"{r.card.text} {stars(r.card.stars)}" if r.card else "no category"
    title = f"Round {r.round}: {card} · conjurer {session.pname(r.conjurer)}"
    out = _rows("class:title", title, width)
    out += _rows("", case_text(session, r), width, indent="  ", hang="    ")
    v = session.view
    players = v.players if v else []
    shown = [p for p in players if p.seat in r.points or p.seat in r.words or p.seat in r.reasons]
    # The names give way before the reasons do: a name of 24 wide characters left a reason
    # column of three cells at 60 columns, 167 lines to page through (found by review).
    name_cap = max(6, width // 4)
    name_w = min(max([cells(p.name) for p in shown] + [4]), name_cap) + 1
    pts_w = max([len(f"{r.points.get(p.seat, 0):+d}") for p in shown] + [2]) + 2
    for p in shown:
        pts = r.points.get(p.seat, 0)
        word = r.words.get(p.seat)
        reasons = r.reasons.get(p.seat, [])
        if len(reasons) > 1:
            why = "; ".join(f"{pt.points:+d} {pt.why}" for pt in reasons)
        else:
            why = "; ".join(pt.why for pt in reasons) or ("no points" if word else "no word")
        if p.seat in r.invalid and not any(pt.rule == "P5" for pt in reasons):
            why += f" (invalid: {r.invalid[p.seat]})"
        wtext = f"'{word}'" if word else "(no word)"
        name = shorten(p.name, name_w - 1)
        lead = "  " + name + " " * (name_w - cells(name)) + f"{pts:+d}".ljust(pts_w)
        hang = " " * (cells(lead) + 2)
        out += _rows(f"class:player.{p.colour}", f"{wtext}: {why}", width, indent=lead, hang=hang)
    return out


def result_lines(session: Session, r: ResultView, width: int = 80) -> StyleAndTextTuples:
    return _joined(result_rows(session, r, width))


def _standing_note(p: PlayerView) -> str:
    """What follows a name in the standings: the computer player's mark, as on the board;
    then you, removed (as the audit says), or both (a removal can end the game)."""
    mark = f" {COMPUTER_TAG}" if p.computer else ""
    said = (["you"] if p.you else []) + (["removed"] if p.kicked else [])
    return mark + (f" ({', '.join(said)})" if said else "")


def standing_rows(session: Session, width: int = 80, compact: bool = False) -> list[Row]:
    """The final standings: one line per player, or (``compact``, under the boards that
    already show every score) the places in a few wrapped lines."""
    v = session.view
    assert v is not None
    title = "Final standings (the game was abandoned)" if v.abandoned else "Final standings"
    out = [Row([("class:title", title)])]
    ranked = sorted(v.players, key=lambda p: (-p.score, p.seat))
    name_w = max([cells(p.name + _standing_note(p)) for p in ranked] + [6]) + 6
    place = 0
    last = None
    places = []
    for i, p in enumerate(ranked, 1):
        if p.score != last:
            place, last = i, p.score
        win = p.seat in v.winners
        mark = "  ★ winner" if win else ""
        you = _standing_note(p)
        style = f"class:player.{p.colour}" + (" class:winner" if win else "")
        places.append(f"{place}. {p.name}{you} {p.score}{' (won)' if win else ''}")
        text = f"  {place}. {p.name}{you}"
        if not compact:
            out.append(Row([(style, ljust(text, name_w) + f"{p.score:>4}{mark}")]))
    if compact:
        group = next(_groups)
        out += [Row([("", t)], 0, group) for t in wrap_items(places, width, " · ", "  ", "  ")]
    if v.winners:
        names = names_list([session.pname(s) for s in v.winners])
        verb = "wins" if len(v.winners) == 1 else "share the win"
        out += _rows("class:winner", f"{names} {verb}!", width, indent="  ")
    elif v.abandoned:
        out += _rows(
            "class:dim", "Nobody was connected for a while, so nobody wins.", width, 0, "  "
        )
    return out


def standings(session: Session, width: int = 80) -> StyleAndTextTuples:
    return _joined(standing_rows(session, width))


# ------------------------------------------------------------------ the panel


def _proposal_text(session: Session, p: ProposalView) -> tuple[str, str, str]:
    """What the proposal says, where its vote stands, and the style of its line."""
    by = session.pname(p.by)
    if p.kind == "challenge":
        seat = p.seats[0] if p.seats else None
        word = p.words[0] if p.words else "?"
        rule = RULE_TEXT.get(p.rule or "", p.rule or "")
        what = f"{by} challenges {session.pname(seat)}'s '{word}': {rule}"
    else:
        words = " = ".join(f"'{w}'" for w in p.words)
        what = f"{by} proposes {words} as the same thing"
    yes = sum(1 for x in p.votes.values() if x)
    no = sum(1 for x in p.votes.values() if not x)
    if p.carried is None:
        waiting = [session.pname(s) for s in p.voters if s not in p.votes]
        state = f"yes {yes} · no {no}" + (
            f" · waiting for {names_list(waiting)}" if waiting else ""
        )
        return what, state, ""
    verdict = "carried" if p.carried else "rejected"
    return what, f"{verdict} ({yes}-{no})", ("class:ok" if p.carried else "class:dim")


def counted_as_one_rows(session: Session, width: int = 80) -> list[Row]:
    """The words that count as one now (``View.counted_as_one``), so that nobody proposes as
    the same thing what already is (a newcomer could not tell "zeppelin" and "Zeppelins"
    were matched until the scores came)."""
    v = session.view
    assert v is not None
    out: list[Row] = []
    for seats in v.counted_as_one:
        words = [
            f"{session.pname(s)} '{p.summon}'"
            for s in seats
            if (p := session.player(s)) is not None and p.summon is not None
        ]
        if len(words) >= 2:
            out += _rows("class:ok", "Counted as one: " + ", ".join(words), width, 1, "", "  ")
    return out


def proposal_rows(session: Session, width: int = 80) -> list[Row]:
    v = session.view
    assert v is not None
    if not v.proposals:
        if session.sub:
            return []  # a challenge or a proposal is being made: its menu is the panel
        out = [Row([("class:dim", "No challenges or proposals yet.")], 1)]
        if session.spectator or v.you is None:  # the keys are the players' (a watcher's read
            hint = (  # them as their own, seen at 80x24)
                "The players may challenge a word (not a noun, has adjectives, off the "
                "category, holds a spell word) or propose that two words name the same thing."
            )
        else:
            hint = (
                "c challenges a word (not a noun, has adjectives, off the category, holds a "
                "spell word); s proposes that two words name the same thing; d: you are done."
            )
        return out + _rows("class:dim", hint, width, 2)
    out = [Row([("class:title", "Proposals")], 1)]
    # Open proposals this player votes on first, then the other open ones, then the settled.
    order = sorted(
        v.proposals,
        key=lambda p: (p.carried is not None, v.you not in p.voters, p.id),
    )
    for p in order:
        what, state, style = _proposal_text(session, p)
        group = next(_groups)
        lines = wrap_items([f"{p.id + 1}. {what}", state], width, " — ", " ", "    ")
        out += [Row([(style, line)], 0, group) for line in lines]
        for seat, reason in sorted(p.reasons.items()):
            if reason and not (seat == p.by and p.votes.get(seat) is True):
                # (the proposer's own yes goes without saying: the line says who proposed)
                out += _rows(
                    "class:dim", f"{session.pname(seat)}: {reason}", width, 2, "      ", "        "
                )
    return out


def proposals(session: Session, width: int = 80) -> StyleAndTextTuples:
    return _joined(proposal_rows(session, width))


def challenge_menu(session: Session, seat: int, width: int = 80) -> list[Row]:
    v = session.view
    assert v is not None
    p = session.player(seat)
    word = p.summon if p else "?"
    out = _rows("class:title", f"Challenge {session.pname(seat)}'s '{word}': which rule?", width)
    category = f" ({v.card.text})" if v.card else ""
    for i, rule in enumerate(RULE_TEXT, 1):
        text = f"{i} it {RULE_TEXT[rule]}" + (category if rule == "category" else "")
        out += _rows("", text, width, 0, indent="  ", hang="    ")
    return out


def card_rows(session: Session, width: int = 80) -> list[Row]:
    v = session.view
    assert v is not None
    open_cards = [c for c in v.cards if not c.used]
    out = [Row([("class:title", "Categories on the table")], 1)]
    cells_ = [f"{i}. {c.text} {stars(c.stars)}" for i, c in enumerate(open_cards, 1)]
    col = min(max([cells(c) for c in cells_] + [10]) + 3, width - 2)
    per_line = max(1, (width - 2) // col)
    for i in range(0, len(cells_), per_line):
        row = "".join(pad(c, col) for c in cells_[i : i + per_line])
        out.append(Row([("", "  " + row.rstrip())]))
    out += _rows("class:dim", "★ = the points a match scores (1 to 3).", width, 2, "  ")
    return out


def cards(session: Session, width: int = 80) -> StyleAndTextTuples:
    return _joined(card_rows(session, width))


def shell_lines(command: str, width: int, indent: str, hang: str) -> list[str]:
    """A command to copy, wrapped on its words: each line but the last ends in a shell's line
    continuation, so that copied from the terminal as it stands it still runs whole (a join
    line cut in two at 60 columns ran its first line alone, which made a room of its own)."""
    pieces = wrap(command, width - 2, indent, hang)
    return [p + " \\" for p in pieces[:-1]] + pieces[-1:]


def lobby_rows(session: Session, width: int = 80) -> list[Row]:
    v = session.view
    assert v is not None
    n = len([p for p in v.players if not p.kicked])
    seated = f"{n} player{'s' if n != 1 else ''} seated " + (
        f"(full: {MAX_PLAYERS} can play)"  # (a full lobby never said so: a newcomer)
        if n >= MAX_PLAYERS
        else f"({MIN_PLAYERS} to {MAX_PLAYERS} can play)"
    )
    watching = f", {v.spectators} watching" if v.spectators else ""
    # The room's code is in the header, the share line and the feed: the heading says who is here.
    out = _rows("class:title", f"Lobby: {seated}{watching}", width, 0, "", "  ")
    if session.first_time:
        out += _rows("class:pending", HOWTO_SHORT, width, 1, "  ", "  ")
    if v.settings.variant == "dark-magic":
        # Said every time: one who has played before may never have played this variant (a
        # newcomer joined a Dark Magic room that said only "variant: Dark Magic").
        out += _rows("class:pending", HOWTO_SHORT_DARK, width, 1, "  ", "  ")
    for line in settings_lines(v.settings, yours=session.is_host()):
        out += _rows("", line, width, 2, "  ", "    ")
    # Connected through 127.0.0.1 (make play)? Friends need the LAN address the launcher found.
    share = os.environ.get(ENV_SHARE_URL) or session.server
    # The server's pin with it: a friend who pasted it met the certificate unpinned (seen).
    pin = session.pin if share.startswith("wss://") and session.pin else ""
    command = join_command(share, room=v.room, pin=pin)
    lead = "  share: "
    for i, text in enumerate(shell_lines(command, width, lead, " " * (len(lead) + 2))):
        if i == 0:
            out.append(Row([("", lead), ("class:you", text[len(lead) :])]))
        else:
            out.append(Row([("class:you", text)]))
    if session.is_host():
        out += _rows(
            "class:dim", "you are the host: s starts the game, e edits the settings", width, 1, "  "
        )
    return out


def left_room_rows(session: Session, width: int = 80) -> list[Row]:
    """Out of a room's lobby or game for good: why, and where to go from here (the table is
    gone from view).

    Why: a player the host removed still saw the lobby, their own seat marked as theirs and the
    line to share, under a status line that said otherwise; and one removed from a game saw the
    game's board as if they still played in it.
    """
    v = session.view
    assert v is not None and session.ended is not None
    out = _rows("class:title", f"You are no longer in room {v.room}", width)
    out += _rows("class:bad", session.ended[:1].upper() + session.ended[1:] + ".", width, 0, "  ")
    if v.phase != "lobby":
        out += _rows("", "The game goes on without you.", width, 0, "  ")
        if v.settings.spectators:
            out += _rows("", "To watch it, quit (Ctrl-Q) and run:", width, 0, "  ")
            here = watch_command(session.server, v.room, program_here())  # (run here)
            for text in shell_lines(here, width, "    ", "      "):
                out.append(Row([("class:you", text)]))
        return out
    out += _rows("", "To play on, quit (Ctrl-Q) and make a room of your own:", width, 0, "  ")
    command = join_command(session.server, name=session.name or "", program=program_here())
    for text in shell_lines(command, width, "    ", "      "):
        out.append(Row([("class:you", text)]))
    out += _rows("", "or join another with --room CODE in place of --create.", width, 0, "  ")
    return out


def lobby(session: Session, width: int = 80) -> StyleAndTextTuples:
    return _joined(lobby_rows(session, width))


def form_rows(session: Session, width: int = 80) -> list[Row]:
    form = session.form
    assert form is not None
    title = "New room settings" if form.for_create else "Room settings"
    out = [Row([("class:title", title)])]
    for line in settings_lines(form.settings):
        out += _rows("", line, width, 0, "  ", "    ")
    out += _rows("class:dim", form.help(), width, 1, "  ", "  ")
    return out


def form_panel(session: Session, width: int = 80) -> StyleAndTextTuples:
    return _joined(form_rows(session, width))


def join_rows(session: Session, width: int = 80) -> list[Row]:
    """Before a seat: connecting, joining, or the part of the join to change after a refusal."""
    if session.spectator and session.joined:
        return [Row([("", f"Watching room {session.room}.")])]
    what = (
        f"Watching room {session.room}"
        if session.spectator
        else (f"Joining room {session.room}" if session.room else "Creating a room")
    )
    out = _rows("class:title", what, width)
    out += _rows("", f"server: {session.server}", width, 1, "  ", "    ")
    if session.name and not session.spectator:
        out += _rows("", f"your name: {session.name}", width, 1, "  ", "    ")
    field = session.join_field
    if session.join_error and field is not None:
        if (
            session.status is None or session.status[1] != session.join_error
        ):  # else the status line says it
            out += _rows("class:bad", session.join_error, width, 0, "  ", "    ")
        ask = {
            "room": "Type the room's 4-letter code at the prompt (the host's screen shows it).",
            "password": "Type the room's password at the prompt (the host knows it).",
            "name": "Type another name at the prompt.",
            "again": "Press Enter to try again."
            + (" Or w and Enter to watch the game instead." if session.watch_instead else ""),
            "watch": "Press Enter to watch it here (or type another room's code).",
        }[field]
        out += _rows("class:dim", ask + " Ctrl-Q quits.", width, 1, "  ", "    ")
    elif session.gave_up is not None:
        # The status row says what failed and which keys work (it was said three times).
        out += _rows(
            "class:bad", "No answer from the server: is it running, is the address right?",
            width, 0, "  ", "    ",
        )  # fmt: skip
    elif not session.connected:
        out += _rows("class:dim", "Connecting…", width, 0, "  ")
    if session.first_time:
        out += _rows("class:title", "How to play (F2 shows it again)", width, 3)
        for para in howto_for(session.view.settings.variant if session.view else None):
            out += _rows("", para, width, 3, "  ", "     ")
    return out


def _phase_hint(session: Session) -> tuple[str, int] | None:
    """A sentence on what happens now, in the game's own words (RULES.md), and its priority."""
    v = session.view
    assert v is not None
    me = session.me
    conj = session.is_conjurer()
    name = session.pname(v.conjurer)
    if v.phase == "choose":
        if conj:
            return "You are the conjurer: choose the category you will summon a thing from.", 1
        return f"{name} is the conjurer and chooses a category.", 2
    if v.phase == "dark-commit":
        if conj:
            # As many crystals as there will be spell words, at most the rules' (the prompt
            # said "0 to 3" at a table of four after this said "0 to 4": seen by a newcomer).
            low, high = crystal_range(v.settings.variant)
            writers = sum(1 for p in v.players if not p.kicked and not p.skipped) - 1
            return (
                "Dark Magic: write your summoning word first, in secret; the others then write "
                f"spell words, and you mark those you associate with it ({low} to "
                f"{max(low, min(high, writers))}).",
                1,
            )
        return f"Dark Magic: {name} writes the summoning word first, in secret.", 2
    if v.phase == "spell":
        mine = v.turn is not None and v.turn == v.you
        return SPELL_WORD[:1].upper() + SPELL_WORD[1:] + ".", 1 if mine else 2
    if v.phase == "mark":
        low, high = session.crystal_range()
        many = f"{low} to {high}" if low != high else f"{low}"
        if conj and v.settings.variant == "dark-magic":  # the word is written already
            secret = session.my_word()
            return (
                f"Put crystals on the {many} boards whose spell words you associate "
                f"with your secret word{f' {quoted(secret)}' if secret else ''}.",
                1,
            )
        if conj:
            return (
                # (a newcomer conjurer was never asked for an "idea": say what it is, and when
                # it is written)
                f"Think of a thing in the category and put crystals on the {many} boards "
                "whose spell words lead to it; you write it next, in secret.",
                1,
            )
        return (
            f"{name} puts crystals on the spell words that lead to the thing they have in mind.",
            2,
        )
    if v.phase == "commit":
        summoning = me is not None and any(p.seat == me.seat for p in session.summoners())
        watching = session.spectator or v.you is None
        said = (
            CONJURER_SUMMONING_WORD
            if conj
            else WATCHED_SUMMONING_WORD
            if watching
            else SUMMONING_WORD
        )
        text = said[:1].upper() + said[1:] + "."
        if conj and v.settings.variant == "dark-magic":  # D5: written before any spell word
            text += " Yours was locked in before the spell words: they do not bind it."
        else:
            text += " It must not be or contain a spell word (-3)."
        return text, 1 if summoning else 2
    if v.phase == "reveal":
        return "The summon is closed: the words are opened and shown together.", 2
    if v.phase == "review" and me is not None and me.committed and not me.revealed:
        # C6, said to whom it costs: a player back after the words were opened saw only a ✗
        # on their own board (found by a newcomer).
        return (
            "Your summoning word was never revealed (your client was away as the words were "
            "opened): it counts as an invalid word, -3.",
            1,
        )
    return None


def panel_rows(session: Session, width: int = 80) -> list[Row]:
    """The phase's panel, each line with its priority (see :func:`middle`)."""
    if session.form is not None:
        return form_rows(session, width)
    v = session.view
    if v is None or (not session.joined and session.join_field is not None):
        return join_rows(session, width)
    assert v is not None
    if session.left_room():
        return left_room_rows(session, width)
    if v.phase == "lobby":
        return lobby_rows(session, width)
    if v.phase == "over":
        out = standing_rows(session, width, compact=True)
        if v.results:
            out += _rows("class:dim", "F3: the last round's results", width, 2, "  ")
        return out
    out: list[Row] = []
    if v.phase == "choose":
        out += card_rows(session, width)
    if v.card is not None and v.phase in _CARD_PHASES:
        # A category too long for the header is shortened there: whole here (seen: "Thing you
        # find in a… ★★" through a round whose rule 3 turns on the whole of it).
        whole = f"{v.card.text} {stars(v.card.stars)}"
        if whole not in plain(header(session, width)):
            out += _rows("", f"Category: {whole}", width, 1, "", "  ")
    if v.phase == "mark" and session.is_conjurer() and session.marks:
        words = session.marked_spells()
        out += _rows("class:pending", f"Crystals ready for: {words}", width)  # the prompt: Enter
    if v.phase == "review":
        if session.sub and session.sub[0] == "challenge" and len(session.sub) == 2:
            out += challenge_menu(session, session.sub[1], width)
        out += counted_as_one_rows(session, width)
        out += proposal_rows(session, width)
    hint = _phase_hint(session)
    if hint is not None:
        out += _rows("class:dim", hint[0], width, hint[1])
    return out


def panel(session: Session, width: int = 80) -> StyleAndTextTuples:
    rows = panel_rows(session, width)
    v = session.view
    if v is not None and v.phase == "over" and v.results:
        rows = [*rows, Row([("", "")]), *result_rows(session, v.results[-1], width)]
    return _joined(rows)


# ------------------------------------------------------------------ cards


def overlay_rows(session: Session, width: int = 80) -> list[Row]:
    """The open card's lines, whole (the middle scrolls them)."""
    card = session.overlay
    assert card is not None
    v = session.view
    if card.kind in ("results", "over") and v is not None:
        out: list[Row] = []
        if card.kind == "over":
            out += standing_rows(session, width)
            out.append(Row([("", "")]))
        # the card's round and any that ended after it (two can end at once)
        for r in [r for r in v.results if card.round is not None and r.round >= card.round]:
            out += result_rows(session, r, width)
        if card.kind == "results":
            ranked = sorted(v.players, key=lambda p: (-p.score, p.seat))
            scores = [f"{p.name} {p.score}" for p in ranked]
            scores[0] = "Scores: " + scores[0]
            group = next(_groups)
            out += [
                Row([("class:dim", t)], 0, group)
                for t in wrap_items(scores, width, " · ", "  ", "    ")
            ]
        return out  # the key line says what closes it
    if card.kind == "panel":
        return _rows("class:title", "The whole panel", width) + panel_rows(session, width)
    if card.kind == "howto":
        out = _rows("class:title", "How to play Conjure", width)
        for para in howto_for(session.view.settings.variant if session.view else None):
            out += _rows("", para, width, 0, "", "   ")
        return out
    out = _rows("class:title", "Help", width)
    for para in HELP_SPECTATOR if session.spectator else HELP:
        lead = para[: len(para) - len(para.lstrip())]
        out += _rows("", para.lstrip(), width, 0, lead, lead + "  ")
    return out


# ------------------------------------------------------------------ feed


def feed_rows(session: Session, width: int = 80) -> list[Line]:
    """Every feed line wrapped at spaces to ``width`` (continuations indented)."""
    out: list[Line] = []
    styles = {"chat": "class:feed.chat", "error": "class:feed.error", "me": "class:feed.me"}
    for item in session.feed:
        style = styles.get(item.kind, "")
        lead = "· " if item.kind == "event" else "  "
        for text in wrap(item.text, width, lead, "    "):
            out.append([(style, text)])
    return out


def feed(session: Session, limit: int = 100, width: int = 80) -> StyleAndTextTuples:
    return _join(feed_rows(session, width)[-limit:])


# ------------------------------------------------------------------ the middle


@dataclass
class Middle:
    """The middle drawn for one size: its lines and how many of them are the feed."""

    lines: list[Line]
    feed_height: int = 0
    page: int = 10


def _fit(top: list[Row], budget: int) -> list[Row]:
    """The rows of ``top`` shown in ``budget`` lines: every row of the most important levels
    that fit whole, then rows of the next level, a group at a time, in their order, up to the
    first that does not fit (a later paragraph shown where an earlier one is not is read as
    the whole: the how-to ended at its step 5, the scoring gone, with rows to spare)."""
    if budget <= 0:
        return []
    for most in (3, 2, 1, 0):
        chosen = [r for r in top if r.prio <= most]
        if len(chosen) > budget:
            continue
        extra = budget - len(chosen)
        if extra and most < 3:
            keep = {id(r) for r in chosen}
            groups: dict[int, list[Row]] = {}
            for r in top:
                if r.prio == most + 1:
                    groups.setdefault(r.group or -id(r), []).append(r)
            for rows in groups.values():
                if len(rows) > extra:
                    break
                keep.update(id(r) for r in rows)
                extra -= len(rows)
            chosen = [r for r in top if id(r) in keep]
        return chosen
    return [r for r in top if r.prio == 0][:budget]


def middle(session: Session, width: int, height: int) -> Middle:
    """The boards, the panel and the feed (or the open card) in exactly ``height`` lines."""
    if height <= 0:
        return Middle([])
    if session.overlay is not None:
        return _card_middle(session, width, height)
    top: list[Row] = board_rows(session, width) + panel_rows(session, width)
    feed_min = 2 if height >= 10 else 1
    budget = height - feed_min - 1  # the rule above the feed
    chosen = _fit(top, budget)
    if len(chosen) < len(top) and budget >= 1:
        # What is left out is said, on a line of its own (found twice by newcomers: the how-to
        # ended at step 5 with the scoring gone, and a review's vote reasons went, unsaid,
        # whenever what was shown filled its rows exactly).
        chosen = _fit(top, budget - 1)
        hidden = len(top) - len(chosen)
        more = f"… {hidden} more line{'s' if hidden != 1 else ''}: F4 shows them"
        chosen.append(Row([("class:dim", shorten(more, width))]))
    lines = [r.line for r in chosen]
    feed_h = height - len(lines) - 1
    all_feed = feed_rows(session, width)
    most_back = max(0, len(all_feed) - feed_h)
    session.feed_scroll = min(session.feed_scroll, most_back)  # the screen keeps it in range
    back = session.feed_scroll
    label = f"── older lines ({back} newer below: PgDn) " if back else ""
    if not back and most_back:
        label = "── PgUp: older lines "
    label = shorten(label, width)
    lines.append([("class:dim", label + "─" * (width - cells(label)))])
    end = len(all_feed) - back
    shown = all_feed[max(0, end - feed_h) : end]
    lines += shown
    return Middle(lines, feed_h, max(1, feed_h - 1))


def turn_line(session: Session, width: int = 80) -> Line | None:
    """Above a card: the player's own turn and its clock (None: nothing is asked of them).

    Why: a round's results open by themselves as the next round starts, and a newcomer reading
    them lost a spell turn to the clock; the header's clock and the prompt were out of their eye.
    """
    turn = session.own_turn()
    if turn is None:
        return None
    left = session.remaining()
    text = f"▶ Your turn to {turn}" + (f" ({clock(left)} left)" if left is not None else "")
    if cells(text + TURN_TAIL) <= width:
        text += TURN_TAIL
    style = "class:turn" + (" class:countdown.low" if left is not None and left < 10 else "")
    return [(style, fit(text, width))]


#: What closes a card, said on the turn line when it fits.
TURN_TAIL = ": Esc shows the table"
#: The most lines the spell words so far take under the turn line.
SO_FAR_LINES = 2


def spells_so_far(session: Session, width: int = 80) -> list[Line]:
    """Under the turn line, on this player's spell turn: the round's spell words written so
    far, in the order they were written.

    Why: seen at 80x24, the last round's results were still open when a newcomer's spell turn
    came, and the clue was written without the table's in sight. The results stay (they were
    being read); what the turn needs is shown with them.
    """
    v = session.view
    if v is None or v.phase != "spell" or v.you is None or v.turn != v.you:
        return []
    n = max(1, len(v.players))
    start = v.conjurer if v.conjurer is not None else 0
    written = sorted((p for p in v.players if p.spell), key=lambda p: (p.seat - start) % n)
    if not written:
        return []
    items = [shorten(p.spell or "", QUOTED) for p in written]
    items[0] = "Spell words so far: " + items[0]
    rows = wrap_items(items, width, " · ", "  ", "    ")
    if len(rows) > SO_FAR_LINES:
        rows = [*rows[: SO_FAR_LINES - 1], shorten(rows[SO_FAR_LINES - 1] + " · …", width)]
    return [[("class:turn", fit(r, width))] for r in rows]


def _card_middle(session: Session, width: int, height: int) -> Middle:
    turn = turn_line(session, width)
    if turn is None or height < 2:
        return _card_rows(session, width, height)
    top = [turn, *spells_so_far(session, width)][: max(1, height - 1)]
    below = _card_rows(session, width, height - len(top))
    return Middle([*top, *below.lines], 0, below.page)


def _card_rows(session: Session, width: int, height: int) -> Middle:
    card = session.overlay
    assert card is not None
    rows = [r.line for r in overlay_rows(session, width)]
    if len(rows) <= height:
        card.scroll = 0
        return Middle(rows, 0, max(1, height - 1))
    view = height - 1
    card.scroll = min(card.scroll, len(rows) - view)  # the screen keeps it in range
    shown = rows[card.scroll : card.scroll + view]
    below = len(rows) - card.scroll - view
    label = f"── {below} more lines: PgDn " if below > 0 else "── the end (PgUp: the top) "
    label = shorten(label, width)
    shown.append([("class:dim", label + "─" * (width - cells(label)))])
    return Middle(shown, 0, max(1, view - 1))


# ------------------------------------------------------------------ status and key help


def status_lines(session: Session, width: int = 80) -> list[Line]:
    """The status row: the connection banner, else the last warning or error (up to 2 lines)."""
    banner = session.banner_text(width - 1)
    if banner:
        return [[("class:banner", " " + banner + " " * (width - 1 - cells(banner)))]]
    if session.status is None:
        return [[("", "")]]
    kind, text = session.status
    return [[(f"class:status.{kind}", t)] for t in status_rows(text, width)[0]]


def status(session: Session, width: int = 80) -> StyleAndTextTuples:
    return _join(status_lines(session, width))


def key_help(session: Session, width: int = 80, draft: str = "") -> StyleAndTextTuples:
    return [("class:help", " " + session.key_help(width - 1, draft))]
