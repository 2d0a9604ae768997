"""Whole games of both variants over real WebSockets, scored by hand, checked against the log.

Four players (Ann, Bob, Cy, Dee = seats 0-3) and a custom deck whose cards are all worth 2 stars, so
the deal's order cannot change a score. Round r's conjurer is seat r-1. The words are chosen so the
matches are obvious; the expected points are worked out beside each round.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wsclient import Client, open_table, play_round, start_game

from protocol import messages as m
from protocol.deck import Card
from protocol.events import GameStarted, event_from_record
from protocol.messages import RoomSettings
from server.logstore import read_log
from server.rules import fold

NAMES = ["Ann", "Bob", "Cy", "Dee"]
STARS = 2


def deck(variant: str = "standard") -> RoomSettings:
    return RoomSettings(
        variant=variant,  # type: ignore[arg-type]
        deck="custom",
        custom_cards=[Card(text=f"Category {c}", stars=STARS) for c in "ABCD"],
    )


@dataclass
class RoundScript:
    spells: dict[int, str]
    marks: list[int]
    summons: dict[int, str]
    case: str
    points: dict[int, int]
    review: object = None
    invalid: set[int] = field(default_factory=set)


async def challenge_candy(seats: dict[int, Client]) -> None:
    """Ann challenges Cy's 'candy' under the category rule; Bob agrees, Dee does not: 2-1."""
    await seats[0].send(m.ChallengeWord(seat=2, rule="category"))
    await seats[1].wait_view(lambda v: len(v.proposals) == 1)
    await seats[1].send(m.CastVote(proposal=0, yes=True))
    await seats[3].wait_view(lambda v: len(v.proposals) == 1 and 1 in v.proposals[0].votes)
    await seats[3].send(m.CastVote(proposal=0, yes=False, reason="candy can be a category"))
    view = await seats[0].wait_view(lambda v: v.proposals[0].carried is not None)
    assert view.proposals[0].carried is True
    assert view.proposals[0].voters == [0, 1, 3]  # Cy wrote the word: Cy does not vote


STANDARD = [
    # Round 1, Ann conjures and marks Bob and Cy. Ann, Bob and Cy summon 'volcano': "conjured".
    # Ann 2 matchers x 2 stars = 4; Bob and Cy 2 (matched) + 1 (crystal) = 3; Dee 0.
    RoundScript(
        spells={0: "lava", 1: "mountain", 2: "smoke", 3: "island"},
        marks=[1, 2],
        summons={0: "volcano", 1: "volcano", 2: "volcano", 3: "glacier"},
        case="conjured",
        points={0: 4, 1: 3, 2: 3, 3: 0},
    ),
    # Round 2, Bob conjures. Everyone summons 'piano': "everyone", 1 point each but Bob.
    RoundScript(
        spells={1: "keys", 2: "music", 3: "bench", 0: "concert"},
        marks=[0, 3],
        summons={0: "piano", 1: "piano", 2: "piano", 3: "piano"},
        case="everyone",
        points={0: 1, 1: 0, 2: 1, 3: 1},
    ),
    # Round 3, Cy conjures 'lighthouse'; Ann and Bob match each other ('tornado') but not Cy:
    # "missed-conjurer", 2 points per star each = 4.
    RoundScript(
        spells={2: "sea", 3: "wind", 0: "storm", 1: "ship"},
        marks=[0, 1],
        summons={0: "tornado", 1: "tornado", 2: "lighthouse", 3: "harbor"},
        case="missed-conjurer",
        points={0: 4, 1: 4, 2: 0, 3: 0},
    ),
    # Round 4, Dee conjures; all words differ: "failed". Bob's 'paper plane' contains the written
    # word 'paper' (-3); the table rules Cy's 'candy' off-category 2-1 (-3).
    RoundScript(
        spells={3: "moon", 0: "river", 1: "paper", 2: "sugar"},
        marks=[0, 2],
        summons={0: "boat", 1: "paper plane", 2: "candy", 3: "kite"},
        case="failed",
        points={0: 0, 1: -3, 2: -3, 3: 0},
        review=challenge_candy,
        invalid={1, 2},
    ),
]
STANDARD_TOTALS = {0: 9, 1: 4, 2: 1, 3: 1}

DARK = [
    # Round 1, Ann secretly writes 'volcano' first; Bob and Cy (marked) match her: as standard r1.
    RoundScript(
        spells={1: "lava", 2: "ash", 3: "ice"},
        marks=[1, 2],
        summons={0: "volcano", 1: "volcano", 2: "volcano", 3: "glacier"},
        case="conjured",
        points={0: 4, 1: 3, 2: 3, 3: 0},
    ),
    # Round 2, Bob writes 'piano' and marks no board (allowed in Dark Magic); everyone matches.
    RoundScript(
        spells={2: "music", 3: "bench", 0: "concert"},
        marks=[],
        summons={0: "piano", 1: "piano", 2: "piano", 3: "piano"},
        case="everyone",
        points={0: 1, 1: 0, 2: 1, 3: 1},
    ),
    # Round 3, Cy writes 'lighthouse'; Ann and Bob match each other only.
    RoundScript(
        spells={3: "wind", 0: "storm", 1: "ship"},
        marks=[3],
        summons={0: "tornado", 1: "tornado", 2: "lighthouse", 3: "harbor"},
        case="missed-conjurer",
        points={0: 4, 1: 4, 2: 0, 3: 0},
    ),
    # Round 4, Dee writes 'river boat': the conjurer is exempt from the written-word rule in Dark
    # Magic, so it stands although Ann wrote 'river'. Bob's 'paper plane' does not (-3).
    RoundScript(
        spells={0: "river", 1: "paper", 2: "sugar"},
        marks=[0],
        summons={0: "canoe", 1: "paper plane", 2: "candy", 3: "river boat"},
        case="failed",
        points={0: 0, 1: -3, 2: 0, 3: 0},
        invalid={1},
    ),
]
DARK_TOTALS = {0: 9, 1: 4, 2: 4, 3: 1}


async def play_game(url: str, variant: str, script: list[RoundScript], tables: list) -> list:
    """Play a whole scripted game; appends the table to ``tables``; returns the results."""
    async with open_table(url, NAMES, deck(variant)) as table:
        tables.append(table)
        await start_game(table)
        results = []
        for rs in script:
            result = await play_round(
                table,
                rs.summons,
                rs.spells,
                rs.marks,
                review=rs.review,  # type: ignore[arg-type]
            )
            results.append(result)
        for c in table:
            await c.wait_view(lambda v: v.phase == "over")
        return results


def check_results(results: list, script: list[RoundScript]) -> None:
    for number, (result, rs) in enumerate(zip(results, script, strict=True), 1):
        assert result.round == number
        assert result.conjurer == number - 1
        assert result.case == rs.case, (number, result)
        assert result.points == rs.points, (number, result)
        assert set(result.invalid) == rs.invalid, (number, result)
        assert result.words == rs.summons
        assert result.card is not None and result.card.stars == STARS
        for seat, pts in rs.points.items():  # every point comes with its reason
            assert sum(p.points for p in result.reasons.get(seat, [])) == pts


def check_log(server, table: list[Client], totals: dict[int, int]) -> None:
    """The log verifies, folds to the room's state, and matches every client's last receipt."""
    view = table[0].view
    assert view is not None and view.game_id is not None
    log = read_log(server.replays / f"{view.game_id}.jsonl")
    assert not log.torn
    events = [event_from_record(r.type, r.data) for r in log.records]
    assert isinstance(events[0], GameStarted)
    assert events[0].limits == deck().limits.to_limits()
    room = server.rooms[view.room]
    state = fold(events)
    assert state == room.game
    assert state.totals == totals
    last = log.records[-1]
    for c in table:
        assert c.receipt == m.Receipt(last.seq, last.hash)
    raw = log.path.read_text()
    for c in table:  # only token hashes are logged
        assert c.token is not None and c.token not in raw


async def test_standard_game(server):
    tables: list = []
    results = await play_game(server.url, "standard", STANDARD, tables)
    check_results(results, STANDARD)
    table = tables[0]
    for c in table:
        v = c.view
        assert {p.seat: p.score for p in v.players} == STANDARD_TOTALS
        assert v.winners == [0]
        assert v.you == c.seat
    check_log(server, table, STANDARD_TOTALS)
    # The review's ruling is explained in Cy's points.
    why = [p.why for p in results[3].reasons[2]]
    assert any("ruled" in w for w in why), why


async def test_dark_magic_game(server):
    tables: list = []
    results = await play_game(server.url, "dark-magic", DARK, tables)
    check_results(results, DARK)
    table = tables[0]
    for c in table:
        assert {p.seat: p.score for p in c.view.players} == DARK_TOTALS
        assert c.view.winners == [0]
    check_log(server, table, DARK_TOTALS)


async def test_feed_tells_the_story(server):
    """The feed names actions in plain sentences and reveals words only once published."""
    tables: list = []
    await play_game(server.url, "standard", STANDARD[:1] + STANDARD[1:], tables)
    ann = tables[0][0]
    lines = [line for msg in ann.received if isinstance(msg, m.Update) for line in msg.feed]
    text = "\n".join(lines)
    assert "Bob wrote the spell word 'mountain'." in text
    assert "Cy has locked in." in text
    assert "All words are revealed:" in text
    assert "Round 1 scored: conjured." in text
    assert "The game is over: Ann wins with 9 points." in text
