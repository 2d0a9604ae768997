"""House rules chosen by the host: the game is played and scored by them, the log records them, and
``conjure replay`` verifies the game by them and shows the official reading beside them (H1-H3)."""

from __future__ import annotations

import json

from wsclient import open_client, open_table, play_round, start_game

from conjure.client.cli import main
from conjure.protocol import messages as m
from conjure.protocol.deck import Card
from conjure.protocol.messages import RoomSettings
from conjure.server.logformat import read_log

NAMES = ["Ann", "Bob", "Cy", "Dee"]


def settings(house: list[str]) -> RoomSettings:
    cards = [Card(text=f"Category {c}", stars=3) for c in "ABCD"]
    return RoomSettings(deck="custom", custom_cards=cards, house_rules=house)


async def test_an_unknown_house_rule_is_refused_in_the_settings(server):
    async with open_client(server.url, "Ann") as ann:
        await ann.send(m.CreateRoom(name="Ann", settings=settings(["double-everything"])))
        err = await ann.expect_error("bad_settings")
        assert "double-everything" in err.message and "pairs-per-star" in err.message


async def test_a_game_played_by_a_house_rule_is_scored_and_audited_by_it(server, capsys, tmp_path):
    async with open_table(server.url, NAMES, settings(["pairs-per-star"])) as table:
        view = await start_game(table)
        assert view.settings.house_rules == ["pairs-per-star"]
        conj = view.conjurer
        assert conj == 0
        # Ann conjures "car" and Bob matches her; Cy and Dee share "bus", which is not hers (P2d:
        # a flat 2 each officially; 2 per star, 3 stars, under H3).
        result = await play_round(
            table,
            {0: "car", 1: "car", 2: "bus", 3: "bus"},
            {0: "wheel", 1: "road", 2: "seat", 3: "door"},
            [0, 1],
        )
        game_id = table[0].view.game_id
    assert result.case == "conjured"
    log = server.replays / f"{game_id}.jsonl"
    start = read_log(log).records[0]
    assert start.data["house_rules"] == ["pairs-per-star"]
    code = main(["replay", str(log), "--json", "--no-state-dir"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc["problems"]  # verified by the rules it was played with
    rnd = doc["rounds"][0]
    official = rnd["official"]["scores"]
    played = rnd["scores"]
    assert played == {name: result.points[seat] for seat, name in enumerate(NAMES)}
    for name in ("Cy", "Dee"):
        assert played[name] - official[name] == 3 * 2 - 2  # H3's 2 per star against a flat 2
    for name in ("Ann", "Bob"):
        assert played[name] == official[name]  # the reading changes nothing else
    main(["replay", str(log), "--no-state-dir"])
    text = capsys.readouterr().out
    assert "Played under House rule pairs-per-star (H3); the official reading would give" in text
