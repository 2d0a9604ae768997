"""Real game logs for bench/audit.py: seeded games played on the rules engine, written as a server does.

Every command goes through ``decide_and_fold`` (a refused one is logged nowhere, as on a server,
and counted); every decision is written with the real ``LogWriter.append_many``, its command on
the batch's first record (``command_data``), exactly as ``server.room`` appends it. The game is
started as the room starts one: a seeded deal from the default deck, the word data's
fingerprint and the current log format. Nothing here writes a record the engine did not decide.

Two styles of play (``Style``):

* ``BUSY``: what a lively table does: now and then a void round, a turn run out, a replaced
  commitment, a reveal never made, a pause, a dropped connection; in review a few challenges and
  "same thing" proposals per player, votes (some changed), proposals left to the clock.
* ``LONGEST``: the most events one game yields from events the engine caps: 8 players, every
  proposal it accepts in every round (each word challenged by every rule, every pair of words
  proposed as the same), every voter voting once, every reopened review closed again with
  ``done``; and none of the events it does not cap (presence changes, pauses, replaced
  commitments, changed votes), which could make a log any length by repetition alone.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import trio

from conjure.protocol import events as ev
from conjure.protocol.commitment import commitment
from conjure.protocol.counts import MAX_PLAYERS, crystal_range
from conjure.protocol.deal import combined_seed, commitment_of, seeded_deal
from conjure.protocol.deck import default_deck
from conjure.protocol.errors import Refusal
from conjure.protocol.events import COLOURS, RULE_TEXT, event_data, event_type
from conjure.protocol.words import word_fingerprint
from conjure.server.logformat import LOG_FORMAT, LogRecord
from conjure.server.logstore import open_for_append
from conjure.server.rules import commands as cmd
from conjure.server.rules.decide import MAX_PROPOSALS_PER_PLAYER, decide_and_fold
from conjure.server.rules.evolve import evolve
from conjure.server.rules.state import Game

START = 1767225600.0  #: 2026-01-01 00:00:00 UTC: the first game's start (times are data)
NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal")

#: Words the scripted players write. Summoning words come from a few per round, so matches happen.
SPELL_WORDS = (
    "wheel", "engine", "sky", "wing", "fast", "red", "loud", "water", "tall", "wood", "metal",
    "round", "cold", "sweet", "night", "green", "paper", "stone", "fire", "salt", "glass",
    "light", "heavy", "soft", "sharp", "deep", "old", "bright", "small", "wild",
)  # fmt: skip
SUMMON_WORDS = (
    "airplane", "boat", "train", "lion", "tiger", "zebra", "apple", "banana", "cherry", "hammer",
    "saw", "drill", "piano", "violin", "drum", "castle", "tower", "bridge", "rose", "tulip",
    "oak", "whale", "shark", "dolphin", "pizza", "bread", "cheese", "doctor", "teacher", "pilot",
    "football", "tennis", "chess", "kettle", "lamp", "mirror", "river", "mountain", "desert",
    "island", "rocket", "bicycle", "candle", "ladder", "anchor", "crown", "eagle", "owl",
)  # fmt: skip
REASONS = ("", "", "", "it fits", "not really", "a stretch", "same thing to me", "no")


@dataclass(frozen=True)
class Style:
    """How the scripted table plays: chances per round or per action (0 to 1)."""

    name: str
    void_round: float = 0.0  #: the conjurer lets the choosing time run out
    turn_runs_out: float = 0.0  #: a spell turn passes on the clock
    replace_commit: float = 0.0  #: a player replaces their commitment while the summon is open
    never_reveals: float = 0.0  #: one player never reveals (C6)
    pause: float = 0.0  #: the host pauses and resumes
    presence: float = 0.0  #: a player's connection drops and comes back
    proposals: tuple[int, ...] = (0,)  #: proposals a player tries per round (one is drawn)
    every_proposal: bool = False  #: try every proposal the engine could accept
    change_vote: float = 0.0  #: a voter changes their vote while the proposal is open
    left_open: float = 0.0  #: a proposal's last voter never votes (the review settles it)
    done_again: bool = False  #: reopened players say done again at once
    review_clock: float = 0.0  #: the review ends on the clock rather than on everyone's done
    yes: float = 0.4  #: a vote is yes
    step: tuple[float, float] = (0.3, 2.0)  #: seconds between two actions
    review_step: tuple[float, float] = (0.1, 0.5)  #: seconds between two actions in review


BUSY = Style(
    "busy",
    void_round=0.04,
    turn_runs_out=0.04,
    replace_commit=0.15,
    never_reveals=0.05,
    pause=0.15,
    presence=0.6,
    proposals=(0, 0, 1, 1, 1, 2, 2, 3),
    change_vote=0.1,
    left_open=0.15,
    review_clock=0.1,
)
#: Challenges fail (few yes votes) so that every word stays open to every other proposal.
LONGEST = Style(
    "longest",
    every_proposal=True,
    done_again=True,
    yes=0.0,
    step=(0.3, 1.0),
    review_step=(0.05, 0.1),
)


@dataclass
class Decision:
    """One batch of the log: the command's time, its events as stored, and the command."""

    ts: float
    items: list[tuple[str, dict[str, Any]]]
    command: dict[str, Any]


@dataclass
class GameLog:
    game_id: str
    decisions: list[Decision] = field(default_factory=list)
    refused: Counter[str] = field(default_factory=Counter)  #: refusal codes of tried commands
    state: Game | None = None

    @property
    def events(self) -> int:
        return sum(len(d.items) for d in self.decisions)

    def types(self) -> Counter[str]:
        return Counter(t for d in self.decisions for t, _ in d.items)


class _Table:
    """Scripted players at one table: each move goes through the engine, as through a room."""

    def __init__(self, rng: random.Random, style: Style, game_id: str, now: float, n: int) -> None:
        self.rng = rng
        self.style = style
        self.now = now
        self.log = GameLog(game_id)
        self.nonces: dict[tuple[int, int], tuple[str, str]] = {}
        self._start(game_id, n)

    # -- plumbing

    @property
    def g(self) -> Game:
        assert self.log.state is not None
        return self.log.state

    def run(self, command: cmd.AnyCommand, *, optional: bool = False) -> bool:
        """Decide ``command``; log what it produced. A refusal is fatal unless ``optional``."""
        decided = decide_and_fold(self.log.state, command)
        if isinstance(decided, Refusal):
            if not optional:
                raise RuntimeError(f"the engine refused {command!r}: {decided.code}")
            self.log.refused[decided.code] += 1
            return False
        events, state = decided
        if events:
            items = [(event_type(e), event_data(e)) for e in events]
            self.log.decisions.append(Decision(command.now, items, cmd.command_data(command)))
        self.log.state = state
        return True

    def wait(self) -> float:
        """Let a moment pass before the next action, within the phase's clock."""
        low, high = self.style.review_step if self.g.phase == "review" else self.style.step
        self.now += round(self.rng.uniform(low, high), 3)
        deadline = self.g.deadline
        if deadline is not None and self.now >= deadline:
            raise RuntimeError(f"the script is too slow for the {self.g.phase} phase's clock")
        return self.now

    def timeout(self) -> None:
        """The room's clock: a tick just after the deadline, carrying the deadline it acts on."""
        deadline = self.g.deadline
        assert deadline is not None, f"the {self.g.phase} phase has no clock"
        self.now = round(deadline + self.rng.uniform(0.001, 0.2), 3)
        self.run(cmd.Tick(now=self.now, deadline=deadline))

    def chance(self, p: float) -> bool:
        return p > 0 and self.rng.random() < p

    # -- the game

    def _start(self, game_id: str, n: int) -> None:
        """As ``server.room`` starts a game: a seeded deal, the word data named, log format 2."""
        rng = self.rng
        server_seed = rng.randbytes(32).hex()
        contributions = {s: rng.randbytes(32).hex() for s in range(n)}
        deck = default_deck()
        deal = ev.DealRecord(
            commitment=commitment_of(server_seed),
            server_seed=server_seed,
            contributions=contributions,
            deck=deck,
        )
        players = tuple(
            ev.PlayerInfo(
                seat=i,
                id=f"p{i}",
                name=NAMES[i],
                colour=COLOURS[i],
                token_hash=hashlib.sha256(f"{game_id}/{i}".encode()).hexdigest(),
            )
            for i in range(n)
        )
        setup = ev.GameSetup(
            game_id=game_id,
            room="BNCH",
            variant="standard",
            players=players,
            host=0,
            cards=seeded_deal(deck, n, combined_seed(server_seed, contributions, n)),
            limits=ev.Limits(),
            words=word_fingerprint(),
            deal=deal,
            log_format=LOG_FORMAT,
        )
        self.run(cmd.StartGame(now=self.now, setup=setup))

    def play(self) -> GameLog:
        while not self.g.over:
            self.round()
        return self.log

    def round(self) -> None:
        g, s = self.g, self.style
        r = g.round
        assert r is not None
        number = r.number
        self.flap()
        if self.chance(s.void_round):
            self.timeout()
            return
        self.run(
            cmd.ChooseCard(
                now=self.wait(), seat=r.conjurer, card=self.rng.choice(g.remaining_cards())
            )
        )
        self.maybe_pause()
        while self.g.phase == "spell":
            turn = self.g.turn
            assert turn is not None
            if self.chance(s.turn_runs_out):
                self.timeout()
            else:
                word = self.rng.choice(SPELL_WORDS)
                self.run(cmd.WriteSpell(now=self.wait(), seat=turn, word=word))
        if self.g.round is None or self.g.round.number != number:
            return  # void: fewer than two spell words
        self.mark()
        self.flap()
        self.summon()
        self.review()

    def mark(self) -> None:
        r = self.g.round
        assert r is not None
        low, high = crystal_range(self.g.setup.variant)
        spelled = sorted(r.spells)
        k = self.rng.randint(low, min(high, len(spelled)))
        boards = tuple(sorted(self.rng.sample(spelled, k)))
        self.run(cmd.MarkBoards(now=self.wait(), seat=r.conjurer, boards=boards))

    def commit(self, seat: int, word: str) -> None:
        r = self.g.round
        assert r is not None
        nonce = self.rng.randbytes(32)
        self.nonces[(r.number, seat)] = (word, nonce.hex())
        h = commitment(self.g.setup.game_id, r.number, seat, nonce, word)
        self.run(cmd.Commit(now=self.wait(), seat=seat, commitment=h))

    def summon(self) -> None:
        s = self.style
        r = self.g.round
        assert r is not None
        number = r.number
        if s.every_proposal:
            # Eight different words, so that every pair and every word can be disputed.
            pool = self.rng.sample(SUMMON_WORDS, len(self.g.setup.players))
        else:
            pool = self.rng.sample(SUMMON_WORDS, 4)  # a few likely answers: matches happen
        order = list(self.g.summoners())
        self.rng.shuffle(order)
        words = {
            seat: pool[i] if s.every_proposal else self.rng.choice(pool)
            for i, seat in enumerate(order)
        }
        for i, seat in enumerate(order):
            self.commit(seat, words[seat])
            if i < len(order) - 1 and self.chance(s.replace_commit):
                earlier = self.rng.choice(order[: i + 1])
                self.commit(earlier, self.rng.choice(pool))  # the summon is still open
        self.maybe_pause()
        silent = self.rng.choice(order) if self.chance(s.never_reveals) else None
        reveal = [seat for seat in order if seat != silent]
        self.rng.shuffle(reveal)
        for seat in reveal:
            word, nonce = self.nonces[(number, seat)]
            self.run(cmd.Reveal(now=self.wait(), seat=seat, word=word, nonce=nonce))
        if self.g.phase == "reveal":
            self.timeout()  # the silent player's reveal never comes

    def candidates(self) -> Iterator[tuple[int, str, tuple[int, ...]]]:
        """(proposer, kind, args) to try: at random, or every proposal the engine could take.

        ``args``: (target seat, rule index) for a challenge, the two seats for "same"."""
        g, s = self.g, self.style
        r = g.round
        assert r is not None and r.published is not None
        seats = g.active_seats()
        words = sorted(r.published)
        if s.every_proposal:
            wanted: list[tuple[str, tuple[int, ...]]] = [
                ("challenge", (w, i)) for w in words for i in range(len(RULE_TEXT))
            ]
            wanted += [("same", (a, b)) for a in words for b in words if a < b]
            self.rng.shuffle(wanted)
            load = Counter[int]()
            for kind, args in wanted:
                # A proposer the proposal concerns casts no automatic vote: prefer one it does not.
                about = args[:1] if kind == "challenge" else args
                fit = [p for p in seats if load[p] < MAX_PROPOSALS_PER_PLAYER and p not in about]
                fit = fit or [p for p in seats if load[p] < MAX_PROPOSALS_PER_PLAYER]
                if not fit:
                    return
                proposer = min(fit, key=lambda p: (load[p], self.rng.random()))
                load[proposer] += 1
                yield proposer, kind, args
            return
        tries = [(p, self.rng.choice(s.proposals)) for p in seats]
        todo = [p for p, k in tries for _ in range(k)]
        self.rng.shuffle(todo)
        for proposer in todo:
            others = [w for w in words if w != proposer]
            if not others:
                continue
            if len(others) >= 2 and self.rng.random() < 0.4:
                a, b = sorted(self.rng.sample(others, 2))
                yield proposer, "same", (a, b)
            else:
                rule = self.rng.randrange(len(RULE_TEXT))
                yield proposer, "challenge", (self.rng.choice(others), rule)

    def proposal(self, seat: int, kind: str, args: tuple[int, ...]) -> cmd.AnyCommand:
        now = self.wait()
        if kind == "same":
            return cmd.ProposeSame(now=now, seat=seat, a=args[0], b=args[1])
        return cmd.Challenge(now=now, seat=seat, target=args[0], rule=list(RULE_TEXT)[args[1]])

    def review(self) -> None:
        g, s = self.g, self.style
        r = g.round
        if r is None or g.phase != "review":
            return
        number = r.number
        seats = g.active_seats()
        last = self.rng.choice(seats)  # the one who says done only at the very end
        for proposer, kind, args in self.candidates():
            if not self.run(self.proposal(proposer, kind, args), optional=True):
                continue
            made = self.g.round
            assert made is not None
            self.vote(len(made.proposals) - 1)
            if s.done_again or self.chance(0.2):
                for seat in self.g.active_seats():
                    rnd = self.g.round
                    assert rnd is not None
                    if seat != last and seat not in rnd.done and (s.done_again or self.chance(0.3)):
                        self.run(cmd.Done(now=self.wait(), seat=seat))
            self.maybe_pause()
        if self.chance(s.review_clock):
            self.timeout()
            return
        order = list(self.g.active_seats())
        self.rng.shuffle(order)
        for seat in [*(x for x in order if x != last), last]:
            rnd = self.g.round
            if rnd is None or rnd.number != number:
                break
            if seat not in rnd.done:
                self.run(cmd.Done(now=self.wait(), seat=seat))

    def vote(self, pid: int) -> None:
        s = self.style
        r = self.g.round
        assert r is not None
        p = r.proposals[pid]
        pending = [v for v in sorted(p.voters) if v not in p.votes and self.g.active(v)]
        self.rng.shuffle(pending)
        if pending and self.chance(s.left_open):
            pending.pop()  # the review's end settles it
        for i, seat in enumerate(pending):
            yes = self.chance(s.yes)
            reason = self.rng.choice(REASONS)
            self.run(cmd.Vote(now=self.wait(), seat=seat, proposal=pid, yes=yes, reason=reason))
            if i < len(pending) - 1 and self.chance(s.change_vote):
                self.run(cmd.Vote(now=self.wait(), seat=seat, proposal=pid, yes=not yes))

    def maybe_pause(self) -> None:
        if self.chance(self.style.pause):
            host = self.g.host
            self.run(cmd.Pause(now=self.wait(), seat=host))
            self.now += round(self.rng.uniform(5.0, 60.0), 3)  # the clock is stopped meanwhile
            self.run(cmd.Resume(now=self.now, seat=host))

    def flap(self) -> None:
        """A player's connection drops and comes back: the room logs both (``Presence``)."""
        if self.chance(self.style.presence):
            seat = self.rng.choice(self.g.active_seats())
            self.run(cmd.Presence(now=self.wait(), seat=seat, connected=False))
            self.run(cmd.Presence(now=self.wait(), seat=seat, connected=True))


def play_game(
    rng: random.Random, style: Style, game_id: str, now: float, players: int = MAX_PLAYERS
) -> GameLog:
    """One whole game on the real engine, as the scripted table plays it."""
    return _Table(rng, style, game_id, now, players).play()


def write_log(path: Path, game: GameLog) -> int:
    """Write ``game`` with the real LogWriter, one ``append_many`` per decision (each synced to
    disk, as a server does); returns the number of records."""

    async def main() -> int:
        n = 0
        with open_for_append(path) as writer:
            for d in game.decisions:
                n += len(await writer.append_many(d.items, d.ts, command=d.command))
        return n

    return trio.run(main)


def bare_fold(path: Path) -> int:
    """The baseline: decode every record and fold its event with ``evolve``; nothing verified
    (no hash, no chain, no re-decide, no score). Returns the number of events folded."""
    decoder = msgspec.json.Decoder(LogRecord)
    state: Game | None = None
    n = 0
    with path.open("rb") as f:
        for line in f:
            record = decoder.decode(line)
            state = evolve(state, ev.event_from_record(record.type, record.data))
            n += 1
    return n
