"""The screen at 80x24 in every phase of both variants, with 3 and with 8 players.

A real server on loopback, the real ClientApp headless (``clienthelpers.HeadlessClient``), the
other seats played by robots that hold back at the moments worth a look. At each such moment
the screen is read as a person would (``screencheck``): no line wider than 80 cells, nothing of
the layout lost below row 24 (the key help is the last row, the prompt just above it, every
player's board row is there), no word cut mid-word.
"""

from __future__ import annotations

import re

import pytest
from clienthelpers import ENTER, ESC, HeadlessClient, robots
from screencheck import layout_problems, problems
from wsclient import Client

from conjure.client import screen
from conjure.client.app import Options
from conjure.protocol.messages import CastVote, ProposeSame, RoomSettings

LONG = ["Bartholomew", "Constantina", "Dmitri Ivanov", "Evangeline", "Fitzgerald", "Guinevere"]
SHORT = ["Bob", "Cat"]


def phase_is(*phases, round_=None):
    def check(s):
        v = s.view
        return v is not None and v.phase in phases and (round_ is None or v.round == round_)

    return check


async def keys(client: HeadlessClient, text: str) -> None:
    for k in text:
        client.type(k)
        await client.idle()


async def look(ann: HeadlessClient, words: list[str], what: str) -> str:
    """The 80x24 screen, checked as a person would read it; returned for more checks."""

    def read() -> tuple[str, list[str]]:
        # On the app's loop, all at once: the screen and what it should hold cannot drift apart.
        s = ann.session
        shot = ann.client.snapshot(80, 24)
        found = layout_problems(ann.client, 80, 24) + problems(shot, 80, 24, words)
        rows = shot.split("\n")
        help_row = screen.plain(screen.key_help(s, 80)).rstrip()
        if rows[-1] != help_row:
            found.append(f"the last row is not the key help: {rows[-1]!r}")
        prompt = s.prompt().strip()[:20]
        if not any(prompt in row for row in rows[-4:-1]):
            found.append(f"the prompt {prompt!r} is not above the key help")
        if s.overlay is None and s.view is not None:
            for p in s.view.players:
                if not re.search(rf"^[ ▶]{p.seat + 1} {re.escape(p.name[:8])}", shot, re.M):
                    found.append(f"{p.name}'s board row is missing")
        return shot, found

    shot, found = await ann._call(read)
    assert not found, f"{what}:\n" + "\n".join(found) + "\n" + shot
    print(f"--- {what}\n{shot}")
    return shot


def specs(n: int, hold: tuple[str, ...]) -> list[dict]:
    names = (SHORT if n <= 3 else [*LONG, "Hal"])[: n - 1]
    out = []
    for i, name in enumerate(names):
        spell = "hydrogen" if i == 0 else f"{name.split()[0].lower()}clue"
        summon = ["spaceship", "space station", "moon"][i % 3]
        out.append(dict(name=name, spell=spell, summon=summon, hold=hold))
    return out


async def vote(c: Client, proposal: int, yes: bool, reason: str) -> None:
    await c.send(CastVote(proposal=proposal, yes=yes, reason=reason))


@pytest.mark.parametrize("n", [3, 8])
@pytest.mark.parametrize("variant", ["standard", "dark-magic"])
async def test_every_phase_fits_80x24(start_server, tmp_path, variant, n):
    dark = variant == "dark-magic"
    server = await start_server(address_rate=2000.0)  # eight fast players on one address
    opts = Options(
        url=server.url,
        name="Ann",
        create=True,
        ask_settings=False,
        settings=RoomSettings(variant=variant),
        state_dir=str(tmp_path / "ann"),
    )
    async with HeadlessClient(opts) as ann:
        s = ann.session
        await ann.wait(phase_is("lobby"))
        room = s.room
        team = specs(n, ("commit", "reveal", "done"))
        words = ["Ann", "freighter", "ocean", *(x["name"] for x in team)]
        words += [x["spell"] for x in team]
        async with robots(server.url, room, team) as bots:
            await ann.wait(lambda s: len(s.view.players) == n, what=f"{n} seated")
            await look(ann, words, "lobby")
            ann.type("s")
            ann.type("y")  # the host is asked first
            await ann.wait(phase_is("choose"))
            await look(ann, words, "choose")
            await ann.line("1")
            if dark:
                await ann.wait(phase_is("dark-commit"))
                await look(ann, words, "dark-commit")
                await ann.line("ocean")
            else:
                await ann.wait(lambda s: s.view.phase == "spell" and s.view.turn == 0)
                await look(ann, words, "spell, your turn")
                await ann.line("freighter")
            await ann.wait(phase_is("mark"), what="mark")
            await keys(ann, "23")
            await look(ann, words, "mark, two crystals pending")
            ann.type(ENTER)
            await ann.wait(phase_is("commit"), what="commit")
            await look(ann, words, "commit")
            if not dark:
                await ann.line("hydrogen bomb")  # holds Bob's (or Bartholomew's) spell word
                await ann.wait_screen("anyway? y = yes")
                await look(ann, words, "commit, the y/n question")
                await keys(ann, "y")
                await ann.wait(lambda s: s.me.committed, what="Ann locked in")
            for b in bots:
                b.release("commit")
            await ann.wait(phase_is("reveal"), what="reveal")
            await look(ann, words, "reveal")
            for b in bots:
                b.release("reveal")
            await ann.wait(phase_is("review"), what="review")
            await look(ann, words, "review")
            first = bots[0].c
            await first.send(ProposeSame(a=1, b=2))  # proposal 1, on which Ann votes
            await ann.wait(lambda s: s.view.proposals, what="a proposal")
            await keys(ann, "c3")
            await ann.wait_screen("which rule?")
            await look(ann, words, "review, the challenge menu")
            await keys(ann, "3")
            await ann.wait(lambda s: len(s.view.proposals) == 2, what="two proposals")
            for b in bots[:-1]:
                await vote(b.c, 1, True, "a thing of that name does not fit the category here")
            await look(ann, words, "review, proposals and reasons")
            for b in bots:
                b.release("done")
            ann.type("d")
            await ann.wait(lambda s: s.view.round == 2, what="round 2")
            shot = await look(ann, words, "round 1's results card")
            for p in s.view.players:
                assert re.search(rf"^  {re.escape(p.name)} +[+-]\d", shot, re.M), p.name
            ann.type(ESC)
            await ann.wait(lambda s: s.overlay is None, what="the card closed")
            await look(ann, words, "round 2, the card closed")
            for rnd in range(2, n + 1):
                if dark:
                    await ann.wait(
                        lambda s, r=rnd: (
                            s.view.round == r and s.view.phase == "spell" and s.view.turn == 0
                        ),
                        timeout=20,
                        what=f"spell, round {rnd}",
                    )
                else:
                    await ann.wait(
                        lambda s, r=rnd: (
                            s.view.round == r and s.view.phase == "spell" and s.view.turn == 0
                        ),
                        timeout=20,
                        what=f"spell, round {rnd}",
                    )
                await ann.line(f"clue{rnd}")
                await ann.wait(phase_is("commit", round_=rnd))
                await ann.line("spaceship")
                await ann.wait(phase_is("review", "over", round_=rnd), timeout=20)
                if s.view.phase == "review":
                    ann.type("d")
                    await ann.idle()
            await ann.wait(phase_is("over"), timeout=20, what="game over")
            await look(ann, words, "game over, the card")
            ann.type(ESC)
            await ann.wait(lambda s: s.overlay is None, what="the card closed")
            await look(ann, words, "game over, the standings")


def test_the_screen_checker_catches_what_a_reader_would():
    row = "· Bob wrote the spell word 'guita"
    assert problems(row + "\nr'", len(row))  # wrapped mid-word at the edge
    assert problems("Review: c=challenge s=same v=vote · /hel…", 80)
    assert problems(" room ABCD · summoning⏱ 1:59", 80)
    assert problems("x" * 81, 80)
    assert not problems(
        "  Cat locked in, revealing… · conjurer Bartholo…mew", 80, 24, ["Bartholomew"]
    )
    assert not problems("2 points each; your…", 80)
