"""House rules (docs/RULES.md H1-H3): golden tests on hand-worked sheets, and ``conjure replay``.

Every expected number below is worked by hand from the rulebook's words (the comment shows the
arithmetic), not copied from the program's output. *s* is the card's stars.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conjure.client.cli import main
from conjure.protocol.house import HOUSE_RULES, UnknownHouseRule, canonical, parse_house_rules
from conjure.server.rules.scoring import RoundResult, score_round
from conjure.server.tabletop import load_sheet

REPO = Path(__file__).resolve().parent.parent
SHEETS = REPO / "tests" / "sheets"
ALL = frozenset(HOUSE_RULES)


def scored(sheet: str, *house: str) -> RoundResult[str]:
    return score_round(load_sheet(SHEETS / f"{sheet}.toml").round, frozenset(house))


# ---------------------------------------------------------------------------------------------
# The registry


def test_the_registry_names_each_reading_once_with_its_ruling():
    assert {r.name: (r.ruling, r.replaces) for r in HOUSE_RULES.values()} == {
        "missed-per-match": ("H1", "P3"),
        "crystal-others-only": ("H2", "P2c"),
        "pairs-per-star": ("H3", "P2d"),
    }
    text = (REPO / "docs" / "RULES.md").read_text()
    for r in HOUSE_RULES.values():
        assert f"**{r.ruling} `{r.name}`** (instead of {r.replaces})" in text


def test_an_unknown_name_is_refused_with_the_known_ones():
    with pytest.raises(UnknownHouseRule) as caught:
        parse_house_rules(["pairs-per-star", "double-crystals"])
    assert str(caught.value) == (
        "unknown house rule 'double-crystals'; the known house rules are "
        "crystal-others-only, missed-per-match, pairs-per-star"
    )
    with pytest.raises(UnknownHouseRule):
        scored("rulebook", "Pairs-Per-Star")  # names are exact
    assert parse_house_rules("pairs-per-star") == {"pairs-per-star"}  # one bare name, not letters
    # How a chosen set travels (settings, log header, JSON): known names, sorted, no repeats.
    assert canonical(["pairs-per-star", "missed-per-match", "pairs-per-star"]) == [
        "missed-per-match",
        "pairs-per-star",
    ]


# ---------------------------------------------------------------------------------------------
# One test per reading, named after its ruling


def test_H1_missed_per_match_multiplies_by_the_players_who_matched():
    # house_missed.toml, s = 2, nobody matches the conjurer Ann:
    #   Bob 'owl' = Cy 'Owls' = Dee 'an owl' (3 players), Eve 'eagle' = Fay 'eagles' (2 players).
    # Official P3, 2 x s each:       Bob, Cy, Dee 2 x 2 = 4; Eve, Fay 2 x 2 = 4.
    # H1, 2 x s x k per player:      Bob, Cy, Dee 2 x 2 x 3 = 12; Eve, Fay 2 x 2 x 2 = 8.
    official = scored("house_missed")
    house = scored("house_missed", "missed-per-match")
    assert official.case == house.case == "missed-conjurer"
    assert official.scores == {"Ann": 0, "Bob": 4, "Cy": 4, "Dee": 4, "Eve": 4, "Fay": 4}
    assert house.scores == {"Ann": 0, "Bob": 12, "Cy": 12, "Dee": 12, "Eve": 8, "Fay": 8}
    assert [(p.points, p.rule) for p in house.reasons["Eve"]] == [(8, "H1")]
    assert "2 x 2 stars x 2 players who matched (house rule missed-per-match)" in (
        house.reasons["Eve"][0].why
    )
    # missed.toml, s = 3, two pairs: official 2 x 3 = 6 each; H1 2 x 3 x 2 = 12 each.
    assert scored("missed", "missed-per-match").scores == {
        "Ann": 12,
        "Bob": 12,
        "Cy": 0,
        "Dee": 12,
        "Eve": 12,
    }
    # P3 only: in a conjured round H1 changes nothing.
    assert scored("house_conjured", "missed-per-match").scores == scored("house_conjured").scores


def test_H2_crystal_others_only_the_conjurers_own_board_earns_nothing():
    # house_conjured.toml, s = 3, conjurer Ann 'comet' = Bob 'Comets'; Cy 'meteor' = Dee 'the
    # meteor'; crystals on Ann, Cy, Eve.
    # Official: Ann 3 x 1 (P2a) + 1 (P2c) = 4; Bob 3 (P2b) = 3; Cy 1 (P2c) + 2 (P2d) = 3;
    #           Dee 2 (P2d) = 2; Eve 1 (P2c) = 1.
    # H2: Ann loses her own crystal point: 3. The other crystals stand.
    assert scored("house_conjured").scores == {"Ann": 4, "Bob": 3, "Cy": 3, "Dee": 2, "Eve": 1}
    house = scored("house_conjured", "crystal-others-only")
    assert house.scores == {"Ann": 3, "Bob": 3, "Cy": 3, "Dee": 2, "Eve": 1}
    assert [(p.points, p.rule) for p in house.reasons["Ann"]] == [(3, "P2a"), (0, "H2")]
    # rulebook.toml, s = 2, Ann (conjurer) marked: official 2 + 1 = 3; H2 2.
    assert scored("rulebook", "crystal-others-only").scores == {
        "Ann": 2,
        "Bob": 3,
        "Cy": -2,  # a marked non-conjurer keeps the crystal: 1 - 3 (P5) = -2
        "Dee": -3,
    }
    # A crystal scores only in the conjured case (P2c): elsewhere H2 changes nothing.
    assert scored("everyone", "crystal-others-only").scores == scored("everyone").scores


def test_H3_pairs_per_star_score_two_per_star():
    # house_conjured.toml, s = 3: Cy and Dee share 'meteor', not the conjurer's 'comet'.
    # Official P2d: 2 each, so Cy 1 + 2 = 3, Dee 2. H3: 2 x 3 = 6 each, so Cy 1 + 6 = 7, Dee 6.
    house = scored("house_conjured", "pairs-per-star")
    assert house.scores == {"Ann": 4, "Bob": 3, "Cy": 7, "Dee": 6, "Eve": 1}
    assert [(p.points, p.rule) for p in house.reasons["Dee"]] == [(6, "H3")]
    # P2d only: in a missed-conjurer round H3 changes nothing.
    assert scored("house_missed", "pairs-per-star").scores == scored("house_missed").scores


def test_readings_combine_and_leave_the_case_and_penalties_alone():
    # house_conjured.toml with H2 + H3: Ann 3 (no crystal), Cy 1 + 6 = 7, Dee 6.
    both = scored("house_conjured", "crystal-others-only", "pairs-per-star")
    assert both.scores == {"Ann": 3, "Bob": 3, "Cy": 7, "Dee": 6, "Eve": 1}
    assert both.house == {"crystal-others-only", "pairs-per-star"}
    for name in ("rulebook", "everyone", "missed", "dark", "failed", "house_missed"):
        official, house = scored(name), scored(name, *ALL)
        assert house.case == official.case
        assert house.invalid == official.invalid  # P5 is no reading's business
        assert house.groups == official.groups
        assert official.house == frozenset()
    # everyone (P1), failed (P4) and the Dark Magic sheet score the same under every reading.
    for name in ("everyone", "failed", "dark"):
        assert scored(name, *ALL).scores == scored(name).scores


# ---------------------------------------------------------------------------------------------
# Why words matched


@pytest.mark.parametrize(
    ("a", "b", "why"),
    [
        ("Rocket", "  the rocket ", "same letters"),  # W2: case, spacing, a leading article
        ("Spaceships", "spaceship", "plural"),  # W3
        ("geese", "goose", "plural"),
        ("fire trucks", "fire truck", "plural"),
        ("bus", "bu", None),  # W4: a word that merely ends in s is left alone
        ("dog", "cat", None),
    ],
)
def test_same_word_reason_names_the_comparison(a, b, why):
    from conjure.protocol.words import same_word, same_word_reason

    assert same_word_reason(a, b) == why
    assert same_word_reason(b, a) == why
    assert same_word(a, b) == (why is not None)


def test_each_group_says_which_comparison_joined_each_word():
    res = scored("house_missed")
    assert [(x.a, x.b, x.reason, x.rule) for x in res.links] == [
        ("Cy", "Bob", "plural", "W3"),  # 'Owls' = 'owl'
        ("Dee", "Bob", "same letters", "W2"),  # 'an owl' = 'owl': the article is dropped
        ("Fay", "Eve", "plural", "W3"),
    ]
    assert res.unused == []
    dark = scored("dark")  # Cy 'space shuttle' = Ann 'rocket' only by the table's ruling
    assert [(x.a, x.b, x.reason, x.rule, x.ruling) for x in dark.links] == [
        ("Cy", "Ann", "a table ruling", "C7", ("space shuttle", "rocket"))
    ]
    # Nobody wrote 'world' (house_conjured) or 'space ship' (rulebook): unused rulings.
    assert scored("house_conjured").unused == [("planet", "world")]
    assert scored("rulebook").unused == [("space ship", "spaceship")]


def test_a_ruling_is_cited_only_where_the_words_alone_do_not_match():
    from conjure.server.rules.scoring import RoundSheet

    sheet = RoundSheet(
        variant="standard",
        stars=1,
        players=["Ann", "Bob", "Cy", "Dee"],
        conjurer="Ann",
        marked=frozenset({"Bob", "Cy"}),
        spell={"Ann": "sea", "Bob": "sky", "Cy": "star", "Dee": "sail"},
        summon={"Ann": "rocket", "Bob": "rockets", "Cy": "space ship", "Dee": "starship"},
        # the first applies but is not needed (plural already matches); the other two chain (C7)
        same=[("rocket", "rockets"), ("space ship", "rocket"), ("starship", "space ship")],
    )
    res = score_round(sheet)
    assert res.groups == [["Ann", "Bob", "Cy", "Dee"]]
    assert [(x.a, x.b, x.reason) for x in res.links] == [
        ("Bob", "Ann", "plural"),
        ("Cy", "Ann", "a table ruling"),
        ("Dee", "Cy", "a table ruling"),
    ]
    assert res.unused == []  # a ruling that applied, even where not needed, is not unused


# ---------------------------------------------------------------------------------------------
# conjure replay --house-rule, on the committed samples


def replay_json(capsys, name: str, *house: str) -> dict:
    args = ["replay", str(REPO / "replays" / name), "--no-state-dir", "--json"]
    for h in house:
        args += ["--house-rule", h]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


#: Hand-worked house totals from each sample's rounds (``conjure replay`` shows them):
#: sample -> house rule -> totals. Where a reading does not apply, the totals are the official ones.
#: Worked by hand on the rules version 1 samples (kept beside the re-recorded ones, so the older
#: format is audited too).
SAMPLES = {
    # official Ada 14, Emil 18, Dora 11, Cleo 12, Basil 13.
    "sample-v1-standard.jsonl": {
        # round 3, s = 2, Ada = Emil = Cleo = Basil, not the conjurer Dora: 2 x 2 x 4 = 16 each
        # instead of 2 x 2 = 4: +12 for each of the four.
        "missed-per-match": {"Ada": 26, "Emil": 30, "Dora": 11, "Cleo": 24, "Basil": 25},
        # round 1, s = 3, Emil = Dora = Basil beside the conjurer Ada's group: 6 instead of 2,
        # +4 each; round 5, s = 2, Ada = Cleo beside the conjurer Basil's group: +2 each.
        "pairs-per-star": {"Ada": 16, "Emil": 22, "Dora": 15, "Cleo": 14, "Basil": 17},
        # no conjured round has a crystal on the conjurer's board (rounds 3 and 4 do, but they
        # are missed-conjurer and everyone rounds, where no crystal scores).
        "crystal-others-only": {"Ada": 14, "Emil": 18, "Dora": 11, "Cleo": 12, "Basil": 13},
    },
    # official Ada 7, Basil 3, Cleo 5, Dora 8.
    "sample-v1-dark-magic.jsonl": {
        # round 2, s = 2, Ada = Dora: 2 x 2 x 2 = 8 instead of 4: +4 each.
        "missed-per-match": {"Ada": 11, "Basil": 3, "Cleo": 5, "Dora": 12},
        # the conjured rounds 3 and 4 have one group each, and no crystal on the conjurer.
        "pairs-per-star": {"Ada": 7, "Basil": 3, "Cleo": 5, "Dora": 8},
        "crystal-others-only": {"Ada": 7, "Basil": 3, "Cleo": 5, "Dora": 8},
    },
    # official Ann 9, Bob 4, Cy 1, Dee 1.
    "sample-v1-review.jsonl": {
        # round 3, s = 2, Ann = Bob: 8 instead of 4: +4 each.
        "missed-per-match": {"Ann": 13, "Bob": 8, "Cy": 1, "Dee": 1},
        # round 1 (conjured) has one group and the conjurer Ann's board holds no crystal.
        "pairs-per-star": {"Ann": 9, "Bob": 4, "Cy": 1, "Dee": 1},
        "crystal-others-only": {"Ann": 9, "Bob": 4, "Cy": 1, "Dee": 1},
    },
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_replay_json_house_scores_beside_unchanged_official_ones(name, capsys):
    plain = replay_json(capsys, name)
    assert "house" not in plain and "house_rules" not in plain
    assert all("house" not in r for r in plain["rounds"])
    for rule, totals in SAMPLES[name].items():
        doc = replay_json(capsys, name, rule)
        assert doc["verified"]
        assert doc["totals"] == plain["totals"]  # the official score is untouched
        assert [r["scores"] for r in doc["rounds"]] == [r["scores"] for r in plain["rounds"]]
        assert doc["house_rules"] == [rule]
        assert doc["house"]["totals"] == totals
        best = max(totals.values())
        assert doc["house"]["winners"] == [n for n, t in totals.items() if t == best]
        for r in doc["rounds"]:
            h = r["house"]
            official_fields = {k: v for k, v in r.items() if k in h}
            assert set(h) == set(official_fields)  # the same fields as the official scoring
            assert h["case"] == r["case"]
        summed: dict[str, int] = {}
        for r in doc["rounds"]:
            for who, pts in r["house"]["scores"].items():
                summed[who] = summed.get(who, 0) + pts
        assert summed == totals


def test_replay_text_shows_each_round_and_the_totals_side_by_side(capsys):
    path = str(REPO / "replays" / "sample-v1-standard.jsonl")
    assert main(["replay", path, "--no-state-dir", "--house-rule", "missed-per-match"]) == 0
    text = capsys.readouterr().out
    assert text.count("House rule missed-per-match (H1), beside the official score") == 5
    # round 3: Ada officially +4, +16 under H1 (2 x 2 x 4), difference +12
    assert "    Ada          +4     +16         +12" in text
    assert "2 x 2 stars x 4 players who matched (house rule missed-per-match) [H1]" in text
    assert "House rule missed-per-match (H1), beside the official totals:" in text
    assert "  Emil         18      30         +12" in text
    assert "Under the house rules the win goes to: Emil (the same)" in text
    assert "Winner: Emil" in text  # the official result stands
    # --round N explains one round, still beside the house rules; totals cover the whole game
    code = main(
        ["replay", path, "--no-state-dir", "--round", "3", "--house-rule", "pairs-per-star"]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert text.count("beside the official score:") == 1
    assert "  Basil        13      17          +4" in text


def test_replay_refuses_an_unknown_house_rule_as_a_usage_error(capsys):
    path = str(REPO / "replays" / "sample-v1-review.jsonl")
    with pytest.raises(SystemExit) as caught:
        main(["replay", path, "--house-rule", "double-crystals"])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert "unknown house rule 'double-crystals'" in err
    assert "crystal-others-only, missed-per-match, pairs-per-star" in err
