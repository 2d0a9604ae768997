"""The fast broadcast (``update_frames``) says exactly what ``build_view`` says, at every step.

The room encodes each broadcast once and reuses cached parts between broadcasts; a stale cache
would show a player an old result or a wrong check. So whole games (with a carried challenge, a
words-are-the-same ruling, a kick and Dark Magic) are folded event by event, and after every
event each seat's and a spectator's frame is compared with the plainly built view.
"""

from __future__ import annotations

import pytest
from wsclient import unframe

from conjure.protocol.messages import Receipt, ResultView, RoomSettings, Update, server_decoder
from conjure.server import results
from conjure.server.connection import frame_of
from conjure.server.lobby import Lobby
from conjure.server.rules import commands as c
from conjure.server.rules.evolve import evolve
from conjure.server.rules.state import Game
from conjure.server.views import Table as ViewTable
from conjure.server.views import ViewCache, build_view, update_frames
from tests.rulestable import Table, rulebook_example

DECODE = server_decoder


def standard_game() -> Table:
    t = Table(4)
    rulebook_example(t)  # a challenge carried, an invalid word
    t.choose("Animal")
    t.spell_by({"Ann": "stripes", "Bob": "mane", "Cy": "savanna", "Dee": "roar"})
    t.mark("Cy", "Dee")
    t.summon({"Ann": "lion", "Bob": "big cat", "Cy": "zebra", "Dee": "lion"})
    t.run(c.ProposeSame(now=t.now, seat=0, a=0, b=1))
    t.run(c.Vote(now=t.now, seat=2, proposal=0, yes=True, reason="a lion is a big cat"))
    assert t.g.round is not None and t.g.round.proposals[0].carried
    t.done()
    t.run(c.Kick(now=t.now, seat=0, target=3))
    while not t.g.over:
        if t.g.phase == "review":
            t.done()
        else:
            t.timeout()
    return t


def dark_game() -> Table:
    t = Table(3, variant="dark-magic")
    for _ in range(3):
        names = ("Ann", "Bob", "Cy")
        conj = names[t.conjurer]
        t.play_round(
            min(set(range(len(t.g.setup.cards))) - t.g.used),
            {"Ann": "hay", "Bob": "field", "Cy": "milk"},
            (names[(t.conjurer + 1) % 3],),
            {n: "cow" for n in names if n != conj},
            dark_word="cow",
        )
    return t


def frames_match(view_table: ViewTable, g: Game, cache: ViewCache, receipt: Receipt) -> None:
    viewers = [*range(len(g.setup.players)), None]
    feed = ["Something happened."]
    frames = update_frames(view_table, g, viewers, receipt, feed, cache)
    assert set(frames) == set(viewers)
    for v in viewers:
        expected = Update(view=build_view(view_table, g, v), receipt=receipt, feed=feed)
        assert DECODE.decode(unframe(frames[v])) == expected, f"viewer {v} in phase {g.phase}"
        assert frames[v] == frame_of(expected)  # byte for byte, too


@pytest.mark.parametrize("make", [standard_game, dark_game])
def test_fast_frames_equal_the_built_view_after_every_event(make) -> None:
    t = make()
    cache = ViewCache()  # one cache for the whole game, as a room has
    settings = RoomSettings(variant=t.g.setup.variant)
    state: Game | None = None
    past: list[ResultView] = []
    for i, event in enumerate(t.events):
        state = evolve(state, event)
        results.extend_views(state, past)
        assert state is not None
        table = ViewTable(
            code="ABCD",
            settings=settings,
            lobby=None,
            connected=frozenset(p.id for p in state.setup.players[::2]),
            spectators=i % 3,
            results=past,
            now=t.now,
        )
        frames_match(table, state, cache, Receipt(i, f"{i:064x}"))
    assert state is not None and state.over and len(past) == len(state.setup.players)


def test_lobby_frames_equal_the_built_view() -> None:
    lobby = Lobby()
    for name in ("Ann", "Bob", "Cy"):
        lobby.join(name)
    table = ViewTable(code="ABCD", settings=lobby.settings, lobby=lobby, connected=frozenset())
    viewers = [0, 1, 2, None]
    frames = update_frames(table, None, viewers, None, [], ViewCache())
    for v in viewers:
        assert DECODE.decode(unframe(frames[v])) == Update(view=build_view(table, None, v), feed=[])
        assert DECODE.decode(unframe(frames[v])).view.you == v  # type: ignore[attr-defined]


def test_the_review_says_which_words_count_as_one_as_things_stand() -> None:
    """Ann and Dee both wrote "lion": one word from the start. The table rules "lion" and "big
    cat" the same thing: Bob joins them. Nothing counts as one outside the review."""
    t = Table(4)
    rulebook_example(t)
    t.choose("Animal")
    t.spell_by({"Ann": "stripes", "Bob": "mane", "Cy": "savanna", "Dee": "roar"})
    t.mark("Cy", "Dee")
    t.summon({"Ann": "lion", "Bob": "big cat", "Cy": "zebra", "Dee": "Lions"})
    table = ViewTable(code="ABCD", settings=RoomSettings(), lobby=None, connected=frozenset())

    def as_one(viewer: int | None = 0) -> list[list[int]]:
        return build_view(table, t.g, viewer).counted_as_one

    assert t.g.phase == "review"
    assert as_one() == as_one(None) == [[0, 3]]
    t.run(c.ProposeSame(now=t.now, seat=0, a=0, b=1))
    assert as_one() == [[0, 3]]  # proposed, not yet carried
    t.run(c.Vote(now=t.now, seat=2, proposal=0, yes=True, reason="a lion is a big cat"))
    assert as_one() == [[0, 1, 3]]
    t.done()
    assert t.g.phase != "review" and as_one() == []
