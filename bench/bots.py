"""How well the computer players play: many bot games on the rules engine, then hand-made rounds.

Plays ``--games`` whole games among bots (``--players`` each, standard categories from the default
deck) on the pure rules engine (``server.rules.decide``/``fold``, exactly what the server runs),
with every word made by :class:`client.bots.brain.Brain` through the same calls and the same
safety net the protocol bot uses (:func:`client.bots.player.safe_summon`). No server, no network:
a game takes a fraction of a second. It prints

* how often a bot summons the conjurer's word (per summoner, and per round: someone did);
* the distribution of the four cases (and void rounds, which must not happen);
* how often a bot's word was invalid in the engine's result (must be 0), and how often the
  brain's own first choice needed the safety net;
* the hit rate on the hand-made rounds of ``bench/rounds.toml`` (``bench/bot_hits.py``).

    python bench/bots.py [--games 100] [--players 4] [--variant standard|dark-magic|both]
                         [--seed 0] [--noise N]

Exit status 1 when a bot word was invalid (with ``--strict`` also when a target is missed:
conjured the most common standard case, at least 6 in 10 hand-made rounds hit), else 0.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from conjure.client.bots.brain import Brain, load_data  # noqa: E402
from conjure.client.bots.player import passes_checks, safe_summon  # noqa: E402
from conjure.protocol.commitment import commitment  # noqa: E402
from conjure.protocol.deck import default_deck  # noqa: E402
from conjure.protocol.events import COLOURS, GameSetup, Limits, PlayerInfo  # noqa: E402
from conjure.protocol.words import same_word  # noqa: E402
from conjure.server.rules import Refusal, decide, fold  # noqa: E402
from conjure.server.rules import commands as c  # noqa: E402

CASES = ("conjured", "missed-conjurer", "everyone", "failed", "void")


@dataclass
class Stats:
    games: int = 0
    rounds: int = 0
    cases: Counter = field(default_factory=Counter)
    summoners: int = 0  # summoning words written by non-conjurers
    matched_conjurer: int = 0  # ... that were the conjurer's word
    rounds_with_match: int = 0
    words: int = 0  # every summoning word revealed
    invalid: int = 0  # words the engine ruled invalid (must be 0)
    rescued: int = 0  # brain's first choice failed a check; the safety net replaced it
    spell_problems: int = 0
    seconds: float = 0.0
    examples: list[str] = field(default_factory=list)


class Engine:
    """A game on the pure engine: apply commands, fold events, fail loudly on a rejection."""

    def __init__(self, n: int, variant: str, cards, now: float = 1000.0) -> None:
        self.now = now
        self.state = None
        players = tuple(
            PlayerInfo(seat=i, id=f"p{i}", name=f"Bot{i}", colour=COLOURS[i], token_hash=f"h{i}")
            for i in range(n)
        )
        self.run(
            c.StartGame(
                now=now,
                setup=GameSetup(
                    game_id=f"bench-{random.random():.12f}",
                    room="BNCH",
                    variant=variant,
                    players=players,
                    host=0,
                    cards=tuple(cards),
                    limits=Limits(),
                ),
            )
        )

    def run(self, command) -> None:
        out = decide(self.state, command)
        if isinstance(out, Refusal):
            raise AssertionError(f"the engine refused {command!r}: {out.code}: {out.message}")
        self.state = fold(out, self.state)

    @property
    def g(self):
        assert self.state is not None
        return self.state


def _nonce(seat: int, rnd: int) -> bytes:
    return bytes([seat, rnd]) * 16


def play_game(stats: Stats, n: int, variant: str, rng: random.Random, noise: float | None):
    deck = list(default_deck())
    rng.shuffle(deck)
    e = Engine(n, variant, deck[:n])
    dark = variant == "dark-magic"
    base = rng.randrange(1_000_000)
    kwargs = {} if noise is None else {"noise": noise}
    brains = [Brain(base + i, **kwargs) for i in range(n)]
    now = e.now
    while not e.g.over:
        g = e.g
        r = g.round
        conj = r.conjurer
        open_cards = [(i, card) for i, card in enumerate(g.setup.cards) if i not in g.used]
        pick = brains[conj].choose_card([(card.text, card.stars) for _, card in open_cards])
        index, card = open_cards[pick]
        category = card.text
        e.run(c.ChooseCard(now=now, seat=conj, card=index))
        rnd = e.g.round.number
        gid = e.g.setup.game_id
        words: dict[int, str] = {}
        if dark:
            words[conj] = brains[conj].dark_summon(category)
            e.run(_commit(now, gid, rnd, conj, words[conj]))
        while e.g.phase == "spell":
            turn = e.g.turn
            written = list(e.g.round.spells.values())
            word = brains[turn].spell_word(category, written, dark_magic=dark)
            if not word.strip() or is_bad_spell(word, written):
                stats.spell_problems += 1
            e.run(c.WriteSpell(now=now, seat=turn, word=word))
        if e.g.phase != "mark":  # void round
            stats.rounds += 1
            stats.cases[e.g.results[-1].case] += 1
            continue
        spells = dict(e.g.round.spells)
        written = list(spells.values())
        if dark:
            marks = brains[conj].mark(category, spells, dark_magic_word=words[conj])
            target = words[conj]
        else:
            plan = brains[conj].plan(category, spells)
            marks, target = plan.marks, plan.summon
        e.run(c.MarkBoards(now=now, seat=conj, boards=tuple(marks)))
        marked = [spells[s] for s in marks]
        for seat in range(n):
            if dark and seat == conj:
                continue
            if seat == conj:
                first = target or brains[seat].summon(category, marked, written)
            else:
                first = brains[seat].summon(category, marked, written, dark_magic=dark)
            word = safe_summon(brains[seat], first, category, marked, written, dark_magic=dark)
            stats.rescued += not (dark and seat == conj) and not passes_checks(first, written)
            words[seat] = word
            e.run(_commit(now, gid, rnd, seat, word))
        for seat, word in words.items():
            e.run(c.Reveal(now=now, seat=seat, word=word, nonce=_nonce(seat, rnd).hex()))
        for seat in range(n):
            if e.g.phase == "review":
                e.run(c.Done(now=now, seat=seat))
        result = e.g.results[-1]
        stats.rounds += 1
        stats.cases[result.case] += 1
        stats.words += len(words)
        stats.invalid += len(result.invalid)
        others = [s for s in words if s != conj]
        hits = [s for s in others if same_word(words[s], words[conj])]
        stats.summoners += len(others)
        stats.matched_conjurer += len(hits)
        stats.rounds_with_match += bool(hits)
        if len(stats.examples) < 6:
            shown = ", ".join(f"{'*' if s in marks else ''}{w}" for s, w in spells.items())
            stats.examples.append(
                f"{category}: {shown} -> conjurer {words[conj]!r}; table "
                f"{[words[s] for s in others]} ({result.case})"
            )
    stats.games += 1


def is_bad_spell(word: str, written: list[str]) -> bool:
    return any(same_word(word, w) for w in written)


def _commit(now: float, gid: str, rnd: int, seat: int, word: str) -> c.Commit:
    return c.Commit(
        now=now, seat=seat, commitment=commitment(gid, rnd, seat, _nonce(seat, rnd), word)
    )


def report(variant: str, stats: Stats, players: int) -> list[str]:
    rounds = max(stats.rounds, 1)
    lines = [
        f"== {variant}: {stats.games} games of {players} bots, {stats.rounds} rounds "
        f"({stats.seconds:.1f} s, {1000 * stats.seconds / rounds:.1f} ms a round)",
        f"a bot summons the conjurer's word: {stats.matched_conjurer}/{stats.summoners} "
        f"summoning words ({stats.matched_conjurer / max(stats.summoners, 1):.0%}); "
        f"someone did in {stats.rounds_with_match}/{stats.rounds} rounds "
        f"({stats.rounds_with_match / rounds:.0%})",
        "cases: "
        + ", ".join(
            f"{case} {stats.cases[case]} ({stats.cases[case] / rounds:.0%})"
            for case in CASES
            if stats.cases[case] or case != "void"
        ),
        f"invalid bot words: {stats.invalid}/{stats.words}; brain's first choice replaced by "
        f"the safety net: {stats.rescued}; spell words repeating a written word: "
        f"{stats.spell_problems}",
        "examples (* = crystal):",
        *(f"  {x}" for x in stats.examples),
    ]
    return lines


def hand_made(seeds: int) -> tuple[list[str], int, int, int]:
    """Run bench/bot_hits.py; returns its summary lines, rounds hit (seed 0), rounds, invalid."""
    import bot_hits

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bot_hits.main(["--seeds", str(seeds)])
    text = out.getvalue()
    hit = len(re.findall(r"^HIT ", text, re.M))
    miss = len(re.findall(r"^miss ", text, re.M))
    bad = re.search(r"invalid summoning words: (\d+)", text)
    summary = [
        line for line in text.splitlines() if line.startswith(("noise-free", "hit rate", "invalid"))
    ]
    return summary, hit, hit + miss, int(bad.group(1)) if bad else -1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--variant", choices=("standard", "dark-magic", "both"), default="both")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--noise", type=float, default=None, help="override the bots' noise")
    ap.add_argument("--seeds", type=int, default=5, help="bots per hand-made round")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args(argv)

    load_data()
    ok = True  # no invalid word
    targets = True
    variants = ("standard", "dark-magic") if args.variant == "both" else (args.variant,)
    for variant in variants:
        stats = Stats()
        rng = random.Random(args.seed)
        start = time.perf_counter()
        for _ in range(args.games):
            play_game(stats, args.players, variant, rng, args.noise)
        stats.seconds = time.perf_counter() - start
        for line in report(variant, stats, args.players):
            print(line)
        top = max(CASES, key=lambda case: stats.cases[case])
        if stats.invalid:
            ok = False
            print(f"FAIL: {stats.invalid} invalid bot words")
        if variant == "standard":
            verdict = "ok" if top == "conjured" else "MISSED"
            print(f"target, conjured is the most common case: {verdict} (most common: {top})")
            targets = targets and top == "conjured"
        print()

    summary, hit, total, bad = hand_made(args.seeds)
    print(f"== hand-made rounds (bench/rounds.toml, {args.seeds} bots each)")
    for line in summary:
        print(line)
    rate = hit / max(total, 1)
    verdict = "ok" if rate >= 0.6 else "MISSED"
    print(f"first bot (seed 0) hits: {hit}/{total} ({rate:.0%}); target 6 in 10: {verdict}")
    ok = ok and bad == 0
    targets = targets and rate >= 0.6
    return 0 if ok and (targets or not args.strict) else 1


if __name__ == "__main__":
    raise SystemExit(main())
