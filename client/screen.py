"""What the screen shows: pure functions from a Session to prompt_toolkit formatted text.

Layout, top to bottom (see ``client.app``): a header (room, round, conjurer, category, phase,
countdown), the boards (one row per player in that player's colour, with a line for flags and
rulings under it), a panel that depends on the phase (cards to choose from, proposals under
review, the last round's result, final standings, the lobby's settings), the feed, a status
line (connection banner, warnings, errors), the input line and a one-line key help.
"""

from __future__ import annotations

import os

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.styles import Style
from prompt_toolkit.utils import get_cwidth

from client.session import Session, names_list, settings_lines, stars
from protocol.events import RULE_TEXT
from protocol.messages import PlayerView, ResultView, View

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

CASE_TEXT = {
    "everyone": "everyone summoned the same thing",
    "conjured": "some, but not all, matched the conjurer",
    "missed-conjurer": "matches, but not with the conjurer",
    "failed": "no matches: the conjuration failed",
    "void": "the round was voided",
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
            ("ok", "fg:ansigreen"),
            ("bad", "fg:ansired"),
        ]
        rules += [(f"player.{name}", f"fg:{value}") for name, value in COLOUR_STYLES.items()]
    return Style(rules)


def fit(text: str, width: int) -> str:
    """Cut or pad to exactly ``width`` cells (wide characters count double)."""
    out = []
    used = 0
    for ch in text:
        w = max(get_cwidth(ch), 0)
        if used + w > width:
            if out and width > 1:
                while out and used + 1 > width:
                    used -= max(get_cwidth(out.pop()), 0)
                out.append("…")
                used += 1
            break
        out.append(ch)
        used += w
    return "".join(out) + " " * max(0, width - used)


def clock(seconds: float) -> str:
    s = int(seconds + 0.999)
    return f"{s // 60}:{s % 60:02d}"


# ------------------------------------------------------------------ header


def header(session: Session, width: int = 80) -> StyleAndTextTuples:
    v = session.view
    parts = ["Conjure"] if width >= 100 else []
    if v is not None:
        parts.append(f"room {v.room}")
        if v.settings.variant == "dark-magic":
            parts.append("Dark Magic")
        if v.phase != "lobby" and v.rounds:
            parts.append(f"round {v.round}/{v.rounds}")
        if v.conjurer is not None and v.phase not in ("lobby", "over"):
            parts.append(f"conjurer {session.pname(v.conjurer)}")
        if v.card is not None and v.phase not in ("lobby", "over"):
            parts.append(f"{v.card.text} {stars(v.card.stars)}")
        parts.append(PHASE_NAMES.get(v.phase, v.phase))
    elif session.room:
        parts.append(f"room {session.room}")
    elif session.create:
        parts.append("new room")
    if not parts:
        parts.append("Conjure")
    left = " " + " · ".join(parts)
    right = ""
    style_right = "class:header"
    if v is not None and v.paused:
        right = "⏸ paused "
    else:
        remaining = session.remaining()
        if remaining is not None:
            right = f"⏱ {clock(remaining)} "
            if remaining < 10:
                style_right = "class:header class:countdown.low"
    room = width - get_cwidth(right)
    return [("class:header", fit(left, room)), (style_right, right)]


# ------------------------------------------------------------------ boards


def _summon_cell(session: Session, p: PlayerView) -> tuple[str, str]:
    v = session.view
    assert v is not None
    if p.summon is not None:
        text = p.summon
        if p.valid is True:
            return text + " ✓", "class:ok"
        if p.valid is False:
            return text + " ✗ invalid", "class:bad"
        return text, ""
    mine = p.seat == v.you
    if p.committed:
        word = session.my_word() if mine else None
        if v.phase == "reveal":
            if p.revealed:
                return (f"{word} (revealed)" if word else "revealed"), ""
            return (f"{word} (revealing…)" if word else "locked in, revealing…"), ""
        return (f"{word} · locked in" if word else "locked in"), "class:ok"
    if v.phase == "commit" and any(s.seat == p.seat for s in session.summoners()):
        return "thinking…", "class:dim"
    if v.phase == "dark-commit" and p.seat == v.conjurer:
        return "thinking…", "class:dim"
    if v.phase in ("review", "over") and session.active(p):
        return "—", "class:dim"
    return "", ""


def _presence(p: PlayerView, v: View) -> str:
    if p.kicked:
        return "left"
    if p.skipped:
        return "skipped"
    if not p.connected:
        return "away"
    if v.phase == "review" and p.done:
        return "done"
    return "here"


def boards(session: Session, width: int = 80) -> StyleAndTextTuples:
    v = session.view
    if v is None:
        return []
    out: StyleAndTextTuples = []
    name_w, pres_w, spell_w, score_w = 16, 8, 16, 6
    summon_w = max(10, width - (3 + name_w + pres_w + spell_w + 2 + score_w) - 1)
    head = (
        "   "
        + fit("player", name_w)
        + fit("", pres_w)
        + fit("spell word", spell_w)
        + "  "
        + fit("summoning word", summon_w)
        + "points".rjust(score_w)
    )
    out.append(("class:dim", head + "\n"))
    pending = session.marks if v.phase == "mark" and session.is_conjurer() else set()
    for p in v.players:
        style = f"class:player.{p.colour}"
        if p.you:
            style += " class:you"
        marker = "▶" if p.you else " "
        name = p.name
        tags = []
        if v.conjurer == p.seat and v.phase not in ("lobby", "over"):
            tags.append("✦")
        if v.host == p.seat:
            tags.append("♛")
        label = f"{name} {' '.join(tags)}".rstrip()
        spell = p.spell or ""
        if not spell and v.phase == "spell" and v.turn == p.seat:
            spell = "✎ writing…"
        elif not spell and p.passed:
            spell = "(passed)"
        if p.marked:
            crystal, cstyle = "◆", style
        elif p.seat in pending:
            crystal, cstyle = "◇", "class:pending"
        else:
            crystal, cstyle = " ", style
        summon, sstyle = _summon_cell(session, p)
        out.append((style, f"{marker}{p.seat + 1} " + fit(label, name_w)))
        pres = _presence(p, v)
        out.append(
            ("class:dim" if pres in ("away", "left", "skipped") else style, fit(pres, pres_w))
        )
        out.append((style, fit(spell, spell_w)))
        out.append((cstyle, crystal + " "))
        out.append((sstyle or style, fit(summon, summon_w)))
        out.append((style, str(p.score).rjust(score_w) + "\n"))
        notes = []
        if p.invalid_reason:
            notes.append(("class:bad", f"✗ {p.invalid_reason}"))
        for flag in p.flags:
            notes.append(("class:dim", f"⚑ {flag}"))
        for nstyle, text in notes:
            out.append((nstyle, "      " + fit(text, width - 7) + "\n"))
    legend = "   " + ("▶ you · " if v.you is not None else "") + "✦ conjurer · ♛ host · ◆ crystal"
    if pending:
        legend += " · ◇ your pending crystal"
    out.append(("class:dim", legend + "\n"))
    return out


# ------------------------------------------------------------------ the panel


def result_lines(session: Session, r: ResultView, width: int = 80) -> StyleAndTextTuples:
    out: StyleAndTextTuples = []
    card = f"{r.card.text} {stars(r.card.stars)}" if r.card else "no category"
    case = CASE_TEXT.get(r.case, r.case)
    if r.case == "void" and r.reason:
        case = f"round voided: {r.reason}"
    out.append(
        (
            "class:title",
            fit(
                f"Round {r.round}: {card} · conjurer {session.pname(r.conjurer)}", width - 1
            ).rstrip(),
        )
    )
    out.append(("", f"\n  {case}\n"))
    v = session.view
    players = v.players if v else []
    name_w = max([len(p.name) for p in players] + [4]) + 1
    for p in players:
        if p.seat not in r.points and p.seat not in r.words and p.seat not in r.reasons:
            continue
        pts = r.points.get(p.seat, 0)
        word = r.words.get(p.seat)
        reasons = r.reasons.get(p.seat, [])
        why = "; ".join(pt.why for pt in reasons) or ("no points" if word else "no word")
        wtext = f"'{word}'" if word else "—"
        line = f"  {p.name.ljust(name_w)}{pts:+d}  {wtext}: {why}"
        if p.seat in r.invalid and not any(pt.rule == "P5" for pt in reasons):
            line += f" (invalid: {r.invalid[p.seat]})"
        out.append((f"class:player.{p.colour}", fit(line, width - 1).rstrip() + "\n"))
    return out


def standings(session: Session, width: int = 80) -> StyleAndTextTuples:
    v = session.view
    assert v is not None
    title = "Final standings (the game was abandoned)" if v.abandoned else "Final standings"
    out: StyleAndTextTuples = [("class:title", title), ("", "\n")]
    ranked = sorted(v.players, key=lambda p: (-p.score, p.seat))
    place = 0
    last = None
    for i, p in enumerate(ranked, 1):
        if p.score != last:
            place, last = i, p.score
        win = p.seat in v.winners
        mark = "  ★ winner" if win else ""
        you = " (you)" if p.you else ""
        style = f"class:player.{p.colour}" + (" class:winner" if win else "")
        out.append((style, f"  {place}. {p.name}{you}".ljust(22) + f"{p.score:>4}{mark}\n"))
    if v.winners:
        names = names_list([session.pname(s) for s in v.winners])
        verb = "wins" if len(v.winners) == 1 else "share the win"
        out.append(("class:winner", f"  {names} {verb}!\n"))
    elif v.abandoned:
        out.append(("class:dim", "  Nobody was connected for a while, so nobody wins.\n"))
    return out


def proposals(session: Session, width: int = 80) -> StyleAndTextTuples:
    v = session.view
    assert v is not None
    out: StyleAndTextTuples = []
    if not v.proposals:
        out.append(("class:dim", "No challenges or proposals yet.\n"))
        return out
    out.append(("class:title", "Proposals"))
    out.append(("", "\n"))
    for p in v.proposals:
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
            style = ""
        else:
            state = f"{'carried' if p.carried else 'rejected'} ({yes}-{no})"
            style = "class:ok" if p.carried else "class:dim"
        out.append((style, fit(f" {p.id + 1}. {what} — {state}", width - 1).rstrip() + "\n"))
        for seat, reason in sorted(p.reasons.items()):
            if reason:
                out.append(
                    (
                        "class:dim",
                        fit(f"      {session.pname(seat)}: {reason}", width - 1).rstrip() + "\n",
                    )
                )
    return out


def cards(session: Session, width: int = 80) -> StyleAndTextTuples:
    v = session.view
    assert v is not None
    open_cards = [c for c in v.cards if not c.used]
    out: StyleAndTextTuples = [("class:title", "Categories on the table"), ("", "\n")]
    cells = [f"{i}. {c.text} {stars(c.stars)}" for i, c in enumerate(open_cards, 1)]
    col = max([get_cwidth(c) for c in cells] + [10]) + 3
    per_line = max(1, (width - 2) // col)
    for i in range(0, len(cells), per_line):
        row = "".join(fit(c, col) for c in cells[i : i + per_line])
        out.append(("", "  " + row.rstrip() + "\n"))
    return out


def lobby(session: Session, width: int = 80) -> StyleAndTextTuples:
    v = session.view
    assert v is not None
    out: StyleAndTextTuples = [("class:title", f"Room {v.room}"), ("", "\n")]
    n = len([p for p in v.players if not p.kicked])
    out.append(
        (
            "",
            f"  {n} player(s) seated (3 to 8 can play)"
            f"{f', {v.spectators} watching' if v.spectators else ''}\n",
        )
    )
    for line in settings_lines(v.settings):
        out.append(("", "  " + fit(line, width - 3).rstrip() + "\n"))
    out.append(("", "  share: "))
    # Connected through 127.0.0.1 (make play)? Friends need the LAN address the launcher found.
    share = os.environ.get("CONJURE_SHARE_URL") or session.server
    out.append(("class:you", f"conjure play {share} --room {v.room} --name YOURNAME\n"))
    if session.is_host():
        out.append(("class:dim", "  you are the host: s starts the game, e edits the settings\n"))
    return out


def form_panel(session: Session, width: int = 80) -> StyleAndTextTuples:
    form = session.form
    assert form is not None
    title = "New room settings" if form.for_create else "Room settings"
    out: StyleAndTextTuples = [("class:title", title), ("", "\n")]
    for line in settings_lines(form.settings):
        out.append(("", "  " + fit(line, width - 3).rstrip() + "\n"))
    out.append(("class:dim", "  " + fit(form.help(), width - 3).rstrip() + "\n"))
    out.append(("class:dim", "  Enter keeps the value in [brackets].\n"))
    return out


def panel(session: Session, width: int = 80) -> StyleAndTextTuples:
    if session.form is not None:
        return form_panel(session, width)
    v = session.view
    if v is None:
        if session.spectator:
            return [("", f"Watching room {session.room}.\n")]
        return [("class:dim", "Connecting…\n")]
    out: StyleAndTextTuples = []
    last = v.results[-1] if v.results else None
    if v.phase == "lobby":
        return lobby(session, width)
    if v.phase == "over":
        out += standings(session, width)
        if last:
            out.append(("", "\n"))
            out += result_lines(session, last, width)
        return out
    if v.phase == "choose":
        out += cards(session, width)
    if v.phase in ("choose", "dark-commit", "spell") and last is not None:
        out.append(("", "\n"))
        out += result_lines(session, last, width)
    if v.phase == "mark" and session.is_conjurer() and session.marks:
        words = ", ".join(session.player(s).spell or "?" for s in sorted(session.marks))  # type: ignore[union-attr]
        out.append(("class:pending", f"Crystals ready for: {words} (Enter confirms)\n"))
    if v.phase == "review":
        out += proposals(session, width)
    return out


# ------------------------------------------------------------------ feed and status


def feed(session: Session, limit: int = 100) -> StyleAndTextTuples:
    lines = list(session.feed)[-limit:]
    out: StyleAndTextTuples = []
    for i, line in enumerate(lines):
        style = {"chat": "class:feed.chat", "error": "class:feed.error", "me": "class:feed.me"}.get(
            line.kind, ""
        )
        out.append((style, ("· " if line.kind == "event" else "  ") + line.text))
        if i < len(lines) - 1:
            out.append(("", "\n"))
    return out


def status(session: Session, width: int = 80) -> StyleAndTextTuples:
    banner = session.banner_text()
    if banner:
        return [("class:banner", fit(" " + banner, width))]
    if session.status is None:
        return [("", "")]
    kind, text = session.status
    return [(f"class:status.{kind}", fit(" " + text, width).rstrip())]


def key_help(session: Session, width: int = 80) -> StyleAndTextTuples:
    return [("class:help", fit(" " + session.key_help(), width).rstrip())]


def plain(fragments: StyleAndTextTuples) -> str:
    return "".join(text for _, text, *_ in fragments)
