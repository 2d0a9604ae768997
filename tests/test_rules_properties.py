"""Property tests: whatever players do, the engine keeps its invariants.

Hypothesis drives random tables through random (often illegal) commands; after every accepted
command we check the invariants of docs/RULES.md and that the state is the fold of the events.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conjure.protocol import events as ev
from conjure.protocol.commitment import commitment
from conjure.server.rules import Refusal, decide, evolve, fold
from conjure.server.rules import commands as c
from tests.rulestable import DEFAULT_CARDS, nonce_for, start_command

WORDS = [
    "rocket",
    "rockets",
    "ship",
    "spaceship",
    "space ship",
    "dog",
    "dogfish",
    "goose",
    "geese",
    "moon",
    "hydrogen bomb",
    "hydrogen",
    "banana",
    "cat",
    "",
]
RULES = ["noun", "no-adjectives", "category", "written-word"]


def command_for(data, state, now: float) -> c.AnyCommand:
    """A plausible command for the current phase, from any seat (often the wrong one)."""
    n = len(state.setup.players)
    seat = data.draw(st.integers(0, n - 1), label="seat")
    r = state.round
    kind = data.draw(
        st.sampled_from(["phase"] * 12 + ["tick", "skip", "kick", "pause", "resume", "any"]),
        label="kind",
    )
    if kind == "tick":
        return c.Tick(now=now + data.draw(st.sampled_from([0.0, 1e6])))
    if kind == "skip":
        return c.Skip(now=now, seat=state.host, target=seat)
    if kind == "kick":
        return c.Kick(now=now, seat=state.host, target=seat)
    if kind == "pause":
        return c.Pause(now=now, seat=data.draw(st.sampled_from([state.host, seat])))
    if kind == "resume":
        return c.Resume(now=now, seat=state.host)
    phase = (
        state.phase
        if kind == "phase"
        else data.draw(st.sampled_from(["choose", "spell", "mark", "commit", "reveal", "review"]))
    )
    if phase == "choose":
        return c.ChooseCard(
            now=now,
            seat=r.conjurer if data.draw(st.booleans()) else seat,
            card=data.draw(st.integers(0, n)),
        )
    if phase == "spell":
        who = state.turn if data.draw(st.booleans()) and state.turn is not None else seat
        return c.WriteSpell(now=now, seat=who, word=data.draw(st.sampled_from(WORDS)))
    if phase == "mark":
        boards = data.draw(st.lists(st.integers(0, n - 1), max_size=5))
        return c.MarkBoards(now=now, seat=r.conjurer, boards=tuple(boards))
    if phase in ("commit", "dark-commit"):
        who = r.conjurer if phase == "dark-commit" else seat
        word = data.draw(st.sampled_from(WORDS[:-1]))
        h = commitment(state.setup.game_id, r.number, who, nonce_for(who, r.number, word), word)
        return c.Commit(now=now, seat=who, commitment=h)
    if phase == "reveal":
        word = data.draw(st.sampled_from(WORDS[:-1]))
        waiting = sorted(s for s in r.commits if s not in r.reveals)
        if waiting and data.draw(st.integers(0, 4)):
            seat = data.draw(st.sampled_from(waiting))
            for w in WORDS[:-1]:
                if (
                    commitment(state.setup.game_id, r.number, seat, nonce_for(seat, r.number, w), w)
                    == (r.commits[seat])
                ):
                    word = w
        return c.Reveal(now=now, seat=seat, word=word, nonce=nonce_for(seat, r.number, word).hex())
    # review
    what = data.draw(st.sampled_from(["challenge", "same", "vote", "done", "done"]))
    if what == "challenge":
        return c.Challenge(
            now=now,
            seat=seat,
            target=data.draw(st.integers(0, n - 1)),
            rule=data.draw(st.sampled_from(RULES)),
        )
    if what == "same":
        return c.ProposeSame(
            now=now,
            seat=seat,
            a=data.draw(st.integers(0, n - 1)),
            b=data.draw(st.integers(0, n - 1)),
        )
    if what == "vote":
        return c.Vote(
            now=now, seat=seat, proposal=data.draw(st.integers(0, 3)), yes=data.draw(st.booleans())
        )
    return c.Done(now=now, seat=seat)


def check_invariants(before, after, events: list[ev.Event]) -> None:
    scored = [e for e in events if isinstance(e, ev.RoundScored)]
    if not scored:
        assert after.totals == before.totals, "scores only change when a round is scored"
    for e in scored:
        assert e.case in ("everyone", "conjured", "missed-conjurer", "failed")
    cur = before  # the state just before each event of the batch
    for e in events:
        r = cur.round
        if isinstance(e, ev.BoardsMarked):
            low = 0 if cur.setup.variant == "dark-magic" else 2
            assert low <= len(e.boards) <= 4 and len(set(e.boards)) == len(e.boards)
        if isinstance(e, ev.Revealed):
            assert cur.phase == "reveal", "a word is revealed only after every commit is in"
            assert e.seat in r.commits
        if isinstance(e, ev.SummonsPublished):
            assert cur.phase == "reveal" and r.published is None
            # exactly the opened commitments are published; the rest of them are unrevealed
            assert set(e.words) == set(r.reveals)
            assert set(e.unrevealed) == set(r.commits) - set(r.reveals)
            assert all(e.words[s] == r.reveals[s][0] for s in e.words)
        cur = evolve(cur, e)
    assert len(after.results) <= len(after.setup.players), "one round per player"
    if after.round is not None:
        assert 1 <= after.round.number <= len(after.setup.players)
    assert sum(sum(r.points.values()) for r in after.results) == sum(after.totals.values())
    if after.phase == "over":
        assert len(after.results) == len(after.setup.players)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    n=st.integers(3, 6),
    variant=st.sampled_from(["standard", "dark-magic"]),
)
def test_any_accepted_sequence_keeps_the_invariants(data, n, variant):

    now = 1000.0
    state = None
    log: list[ev.Event] = []
    start = start_command(n, variant, now=now)
    out = decide(state, start)
    assert not isinstance(out, Refusal)
    state = fold(out)
    log.extend(out)
    for _ in range(data.draw(st.integers(10, 150), label="steps")):
        if state.phase == "over":
            break
        now += 1.0
        command = command_for(data, state, now)
        out = decide(state, command)
        if isinstance(out, Refusal):
            assert out.code and out.message
            assert decide(state, command) == out, "deciding is deterministic"
            continue
        after = fold(out, state)
        check_invariants(state, after, out)
        state = after
        log.extend(out)
        assert fold(log) == state, "the state is the fold of its events"


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(3, 8),
    variant=st.sampled_from(["standard", "dark-magic"]),
    seed=st.randoms(use_true_random=False),
)
def test_timeouts_alone_finish_any_game(n, variant, seed):
    """The game never stalls: with nobody acting at all, the clock still ends the game."""
    from conjure.protocol.deck import Card

    cards = tuple(Card(text=f"{t}{i}", stars=s) for i, (t, s) in enumerate(DEFAULT_CARDS * 2))[:n]
    now = 0.0
    out = decide(None, start_command(n, variant, cards, now=now))
    state = fold(out)
    for _ in range(1000):
        if state.phase == "over":
            break
        now = (state.deadline or now) + seed.random()
        out = decide(state, c.Tick(now=now))
        assert not isinstance(out, Refusal)
        state = fold(out, state)
    assert state.phase == "over"
    assert all(r.case == "void" for r in state.results)
