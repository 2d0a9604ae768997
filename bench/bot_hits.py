"""How often the computer players summon what a person would, on hand-made rounds.

Runs :meth:`client.bots.brain.Brain.summon` with several seeds on every round of
``bench/rounds.toml`` and prints, per round, the noise-free top 5 and what each seed wrote;
then the hit rate (target: at least 6 in 10), the hit rate counting the round's accepted
synonyms, and how many summoning words broke the rules (must be 0). It also shows which
word the bot's own conjurer plan would aim at when given the round's spell words.

    python bench/bot_hits.py [--seeds 5] [--rounds bench/rounds.toml]
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conjure.client.bots.brain import Brain, resolve, unsafe_summon
from conjure.protocol.words import contains_written, same_word

ROUNDS = Path(__file__).resolve().parent / "rounds.toml"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5, help="bots (seeds 0..N-1) per round")
    ap.add_argument("--rounds", type=Path, default=ROUNDS)
    ap.add_argument("--noise", type=float, default=None, help="override the bots' noise")
    args = ap.parse_args(argv)

    rounds = tomllib.loads(args.rounds.read_text(encoding="utf-8"))["round"]
    hits = lenient = invalid = total = 0
    first = 0
    for r in rounds:
        category, marked = r["category"], r["marked"]
        written = [*marked, *r.get("unmarked", [])]
        answer = r["answer"]
        accept = [answer, *r.get("accept", [])]
        top = Brain(0, noise=0.0).rank_summons(category, marked, written, k=5)
        first += bool(top) and same_word(top[0][0], answer)
        kwargs = {} if args.noise is None else {"noise": args.noise}
        said = []
        for seed in range(args.seeds):
            word = Brain(seed, **kwargs).summon(category, marked, written)
            said.append(word)
            total += 1
            hits += same_word(word, answer)
            lenient += any(same_word(word, a) for a in accept)
            members = {w for w in _members(category)}
            bad = unsafe_summon(word, written) or any(contains_written(word, w) for w in written)
            invalid += bad or word not in members
        plan = Brain(0).plan(category, dict(enumerate(written, start=1)))
        mark = "HIT " if same_word(said[0], answer) else "miss"
        print(f"{mark} {category}: {' + '.join(marked)} -> {answer}")
        print("     top 5: " + ", ".join(f"{w} {s:.3f}" for w, s in top))
        print(f"     seeds: {', '.join(said)}")
        marked_words = [written[s - 1] for s in plan.marks]
        print(f"     own plan with these words: {' + '.join(marked_words)} -> {plan.summon}")
    n = len(rounds)
    print()
    print(f"rounds: {n}, bots per round: {args.seeds}")
    print(f"noise-free first choice is the answer: {first}/{n} ({first / n:.0%})")
    print(
        f"hit rate: {hits}/{total} ({hits / total:.0%}); with accepted synonyms: "
        f"{lenient}/{total} ({lenient / total:.0%})"
    )
    print(f"invalid summoning words: {invalid}")
    return 0 if invalid == 0 else 1


def _members(category: str) -> list[str]:
    from conjure.client.bots.brain import load_data

    data = load_data()
    return [data.words[i] for i in resolve(category).members]


if __name__ == "__main__":
    raise SystemExit(main())
