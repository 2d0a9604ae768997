"""What the input line says: the prompt per phase, what the table waits for, the key help.

:class:`Prompts` reads a :class:`~client.tablestate.TableState` and answers in sentences. Prompts
stay short (the typed text needs the rest of the line); words and names put into them are
shortened on purpose. :meth:`Prompts.prompt_owner` names the question being asked, so the input
line's text belongs to one question only (see ``Session.settle_input``).
"""

from __future__ import annotations

from conjure.client.tablestate import TableState, _cap
from conjure.client.textfit import cells, shorten
from conjure.protocol.messages import PlayerView
from conjure.protocol.wording import names_list
from conjure.protocol.words import same_word

#: A word or a name quoted inside a prompt is shortened to this many cells.
QUOTED = 18
#: How a prompt that asks nothing ends: what the player types after it must not read as the
#: end of its sentence ("Waiting for Ada's spell word ladle").
WAITING = " › "
#: The questions that ask this player nothing (:meth:`Prompts.prompt_owner`).
#: Cells of a name in a removal's question: any name of Latin letters whole (24 at most), and
#: the question on one line of 80 (it was cut at 18: "Remove Wolfeschleg…hausen": a review).
KICK_NAME = 30

NOT_ASKED = frozenset({"wait", "watch", "skipped", "out", "over"})

#: The prompt of one who watches a full lobby instead, once a seat is free there.
SEAT_FREE = "A seat is free: Enter takes it, Ctrl-Q quits: "

#: What a question of the player's own asks, by its owner (:meth:`Prompts.prompt_owner`), as
#: a card over the table names it: the card must not hide a turn whose clock runs.
TURNS = {
    "choose": "choose a category",
    "secret": "write your secret word",
    "spell": "write your spell word",
    "mark": "place the crystals",
    "commit": "lock in your summoning word",
    "review": "finish the review",
}


def few_names(names: list[str], most: int = 3) -> str:
    """'Ann', 'Ann and Bob', ... up to ``most`` names; beyond that, how many."""
    if len(names) > most:
        return f"{len(names)} players"
    return names_list(names)


def quoted(word: str | None) -> str:
    return f"'{shorten(word or '?', QUOTED)}'"


def span(numbers: list[int]) -> str:
    """[1, 2, 3] -> '1-3'; [2, 4] -> '2 4'."""
    if not numbers:
        return "-"
    if numbers == list(range(min(numbers), max(numbers) + 1)) and len(numbers) > 1:
        return f"{min(numbers)}-{max(numbers)}"
    return " ".join(str(n) for n in numbers)


class Prompts(TableState):
    """The prompt and the key help for the current state."""

    #: The host's "quit anyway?" question while it waits for y/n (None: not asked).
    quit_question: str | None = None
    #: The host's "remove them from the game?" question, and the seat, while it waits for y/n.
    #: (the question, the seat, the id of the player asked about)
    kick_question: tuple[str, int, str | None] | None = None

    def confirming(self) -> bool:
        """Whether the "anyway?" question about a word (``confirm_word``) is still the one
        asked: in the phase it was asked in, while it is still this player's word to write."""
        v, me = self.view, self.me
        if v is None or me is None:
            return False
        if v.phase == "spell":
            return v.turn == v.you
        return v.phase in ("commit", "dark-commit")

    def _anyway(self, word: str) -> str:
        """The question after a warning about ``word``: send it as it is, or change it."""
        v = self.view
        verb = "Write" if v is not None and v.phase == "spell" else "Lock in"
        return f"{verb} {quoted(word)} anyway? y = yes, n = change it: "

    def wants_keys(self) -> bool:
        """Single keys act at once (no Enter needed) in these states."""
        if self.gave_up is not None or self.quit_question is not None:
            return True
        if self.kick_question is not None:
            return True
        if self.form is not None or not self.joined or self.view is None or self.spectator:
            return False
        v = self.view
        me = self.me
        if me is None or me.kicked:
            return False
        if v.phase == "lobby":
            return self.is_host()
        if v.paused:
            return False
        if v.phase == "mark" and self.is_conjurer() and not me.marked:
            return True
        if self.confirm_word is not None and self.confirming():
            return True
        if v.phase == "review" and not me.skipped:
            return not (self.sub and self.sub[0] == "vote" and len(self.sub) == 3)
        return False

    def prompt_owner(self) -> tuple | None:
        """Which question the input line answers now; None while that is not known.

        Text typed for one question never becomes the answer to another: when the owner
        changes, the app empties the input line (``Session.settle_input``). None (connecting,
        joining again, paused) keeps the text where it is.
        """
        if self.form is not None:
            return ("form", self.form.for_create, self.form.step)
        if self.join_field is not None and not self.joined:
            return ("join", self.join_field)
        if self.gave_up is not None or self.ended is not None:
            return None
        if not self.name and not self.spectator and not self.token:
            return ("name",)
        v = self.view
        if v is None or not self.joined or v.paused:
            return None
        if self.seat_offered():
            return ("seat",)
        if self.spectator or v.you is None:
            return ("watch",)
        me = self.me
        if me is None or me.kicked:
            return ("out",)
        if v.phase in ("lobby", "over"):
            return (v.phase, self.is_host(), self.sub)
        game = (v.game_id, v.round)
        if me.skipped:
            return ("skipped", *game)
        conj = self.is_conjurer()
        if v.phase == "choose" and conj:
            return ("choose", *game)
        if v.phase == "dark-commit" and conj:
            return ("secret", *game)
        if v.phase == "spell" and v.turn == v.you:
            return ("spell", *game)
        if v.phase == "mark" and conj and not me.marked:
            return ("mark", *game)
        if v.phase == "commit" and any(p.seat == me.seat for p in self.summoners()):
            return ("commit", *game)
        if v.phase == "review":
            sub = self.sub
            return ("review", *game, sub[0] if sub else "", len(sub))
        return ("wait", v.game_id)  # one wait goes on into the next: the text stays

    def asks_nothing(self) -> bool:
        """Whether the input line answers no question of this player's now (a line typed is
        not sent; a slash command still is)."""
        if self.ended is not None and self.join_field is None:
            return True  # the connection is over for good
        owner = self.prompt_owner()
        if owner is None:
            return False
        return owner[0] in NOT_ASKED or (owner[0] == "lobby" and not owner[1])

    def own_turn(self) -> str | None:
        """What the table waits for this player to do now (``TURNS``), None when nothing is.

        A summoning word already locked in, or a review already said done, is not waited for:
        changing them is the player's choice.
        """
        owner = self.prompt_owner()
        me = self.me
        if owner is None or me is None:
            return None
        if (owner[0] == "commit" and me.committed) or (owner[0] == "review" and me.done):
            return None
        return TURNS.get(owner[0])

    def prompt(self) -> str:
        """What the input line says: what you can do now, or what you are waiting for."""
        if self.quit_question is not None:
            return self.quit_question
        if self.kick_question is not None:
            return self.kick_question[0]
        if self.form is not None:
            return self.form.prompt()
        if self.gave_up is not None:
            return "r or Ctrl-Q: "  # what each does is on the status row
        if self.join_field is not None and not self.joined:
            if self.join_field == "room":
                return f"Room code to {'watch' if self.spectator else 'join'} (4 letters): "
            if self.join_field == "password":
                return f"Password for room {self.room}: "
            if self.join_field == "name":
                return "Another name: "
            if self.join_field == "watch":
                return "Enter watches the game here, Ctrl-Q quits: "
            if self.watch_instead is not None:
                return "Enter tries again, w watches instead, Ctrl-Q quits: "
            return "Enter tries again, Ctrl-Q quits: "
        if not self.name and not self.spectator and not self.token:
            return "Your name: "
        if self.ended is not None:
            return "Ctrl-Q quits. "  # the status row says why (the connection is over)
        v = self.view
        if v is None or not self.joined:
            if not self.connected:
                return "connecting… "
            return f"joining room {self.room}, one moment… " if self.room else "creating the room… "
        if self.seat_offered():
            return SEAT_FREE
        if self.spectator or v.you is None:
            return "watching: " + self.waiting_text() + WAITING
        me = self.me
        if me is None:
            return "waiting… "
        if me.kicked:
            return "You were removed from this game. Ctrl-Q to quit. "
        if v.phase == "lobby":
            if self.is_host():
                if self.sub == ("kick",):
                    return "Remove which player (board number, Esc cancels)? "
                if self.sub and self.sub[0] == "kick":
                    who = self.player(self.sub[1])
                    name = shorten(who.name if who else "?", KICK_NAME)
                    return f"Remove {name} (board {self.sub[1] + 1}) from the room? y/n: "
                if self.sub == ("start",):
                    n = len([p for p in v.players if not p.kicked])
                    return f"Start the game now, with these {n} players? y/n: "
                return "Lobby: s=start e=settings k=remove a player: "
            return f"Waiting for {shorten(self.pname(v.host), QUOTED)} to start the game{WAITING}"
        if v.phase == "over":
            ended = "Game abandoned" if v.abandoned else "Game over"
            return f"{ended}. Ctrl-Q to quit. "
        if me.skipped:
            return "You are skipped this round: " + self.waiting_text() + WAITING
        if v.paused:
            extra = " (/resume to continue)" if self.is_host() else ""
            return f"The game is paused{extra}. "
        conj = self.is_conjurer()
        if v.phase == "choose" and conj:
            n = len([c for c in v.cards if not c.used])
            if n == 1:
                return "Choose the last category (type 1): "
            return f"Choose a category (1-{n}): " if n else "Choose a category: "
        if v.phase == "dark-commit" and conj:
            if self.confirm_word is not None:
                return self._anyway(self.confirm_word)
            if me.committed:
                return f"Secret word {quoted(self.my_word())} locked in. Another replaces it: "
            return "Your secret summoning word: "
        if v.phase == "spell" and v.turn == v.you:
            if self.confirm_word is not None:
                return self._anyway(self.confirm_word)
            return "Your spell word: "
        if v.phase == "mark" and conj and not me.marked:
            low, high = self.crystal_range()
            numbers = span([p.seat + 1 for p in self.markable()])
            many = f"{low}-{high}" if low != high else f"{low}"  # (seen: "2-2 crystals")
            return f"Toggle boards {numbers}, Enter to confirm ({many} crystals): "
        if v.phase == "commit" and any(p.seat == me.seat for p in self.summoners()):
            if self.confirm_word is not None:
                return self._anyway(self.confirm_word)
            if me.committed:
                return f"Locked in {quoted(self.my_word())}. Another word replaces it: "
            return "Your summoning word: "
        if v.phase == "review":
            return self._review_prompt()
        return _cap(self.waiting_text()) + WAITING

    def voters_on(self, words: list[str]) -> list[PlayerView] | None:
        """Who would vote on a proposal about ``words`` (V1: whoever wrote one of them does
        not), you included; None when a word is missing."""
        v = self.view
        if v is None:
            return None
        return [
            p
            for p in v.players
            if not (p.kicked or p.skipped)
            and not (p.summon is not None and any(same_word(p.summon, w) for w in words))
        ]

    def _words_of(self, *seats: int) -> list[str] | None:
        found = [self.player(s) for s in seats]
        words = [p.summon for p in found if p is not None and p.summon is not None]
        return words if len(words) == len(seats) else None

    def lone_vote(self, *seats: int) -> str | None:
        """Whether a challenge of ``seats``' word, or a "same thing" proposal of their two words,
        would be decided by your vote alone ("you") or by nobody's ("nobody": everyone wrote one
        of the words, so it is rejected), or by others too (None). Seen: one key made three
        players' words invalid, and 's 2 3' gave two others 6 points each at once."""
        words = self._words_of(*seats)
        voters = self.voters_on(words) if words is not None else None
        if voters is None:
            return None
        if not voters:
            return "nobody"
        return "you" if all(p.you for p in voters) else None

    def challenge_alone(self, seat: int) -> list[str]:
        """The writers of the challenged word when your vote alone would decide it, so one key
        would make them all invalid."""
        v = self.view
        target = self.player(seat)
        if v is None or target is None or target.summon is None or self.lone_vote(seat) != "you":
            return []
        return [
            p.name for p in v.players if p.summon is not None and same_word(p.summon, target.summon)
        ]

    def _review_prompt(self) -> str:
        sub = self.sub
        if sub == ("challenge",):
            return "Challenge whose word (board number, Esc cancels)? "
        if sub and sub[0] == "challenge" and len(sub) == 3:
            target = self.player(sub[1])
            word = quoted(target.summon if target else None)
            writers = self.challenge_alone(sub[1])
            # Who loses, by name where the line holds them (it was 81 columns, and "(2 players)"
            # did not say who: found by review).
            n, names = len(writers), names_list(writers)
            named = f"{names} loses 3" if n == 1 else f"{names} lose 3 each"
            for loses in (named, f"{n} players lose 3 each", "each writer loses 3"):
                ask = f"Only you vote: {loses} for {word}. Challenge? y/n: "
                if cells(ask) <= 78:
                    break
            return ask
        if sub and sub[0] == "challenge":
            target = self.player(sub[1])
            word = target.summon if target else "?"
            return f"Rule for {quoted(word)}: 1-4 from the list (Esc cancels)? "
        if sub == ("same",):
            return "Same thing: first board number (Esc cancels)? "
        if sub and sub[0] == "same" and len(sub) == 3:
            a, b = self.player(sub[1]), self.player(sub[2])
            words = f"{quoted(a.summon if a else None)} = {quoted(b.summon if b else None)}"
            return f"Only you vote, so {words} carries. Propose? y/n: "
        if sub and sub[0] == "same":
            first = self.player(sub[1])
            return f"Same thing as {quoted(first.summon if first else None)}: which other board? "
        if sub == ("vote",):
            numbers = span([p.id + 1 for p in self.votable()])
            return f"Vote on which proposal ({numbers}, Esc cancels)? "
        if sub and sub[0] == "vote" and len(sub) == 2:
            return f"Proposal {sub[1] + 1}: y=yes n=no (Esc cancels)? "
        if sub and sub[0] == "vote":
            return f"Reason for your {'yes' if sub[2] else 'no'} (optional), Enter to send: "
        # v only while a proposal waits for this player's vote, and first then: it is what the
        # table waits for (a newcomer pressed v for a whole game and never had a vote to cast).
        you = self.view.you if self.view is not None else None
        voting = any(you not in p.votes for p in self.votable())
        me = self.me
        if me is not None and me.done:
            return f"You are done; still open: {'v=vote ' if voting else ''}c=challenge s=same: "
        return f"Review: {'v=vote ' if voting else ''}c=challenge s=same d=done: "

    def waiting_text(self) -> str:
        """What the table is waiting for, as a phrase."""
        v = self.view
        if v is None:
            return "waiting"
        if v.paused:
            return "the game is paused"
        conj = shorten(self.pname(v.conjurer), QUOTED)
        if v.phase == "lobby":
            return f"waiting for {shorten(self.pname(v.host), QUOTED)} to start the game"
        if v.phase == "choose":
            return f"waiting for {conj} to choose a category"
        if v.phase == "dark-commit":
            return f"waiting for {conj} to write a secret summoning word"
        if v.phase == "spell":
            who = shorten(self.pname(v.turn), QUOTED)
            if v.turn is not None and v.turn == v.you:
                return "waiting for your spell word"
            return f"waiting for {who}'s spell word"
        if v.phase == "mark":
            return f"waiting for {conj} to place the crystals"
        if v.phase == "commit":
            missing = [p.name for p in self.summoners() if not p.committed]
            return f"waiting for {few_names(missing) or 'everyone'} to lock in a summoning word"
        if v.phase == "reveal":
            missing = [p.name for p in v.players if p.committed and not p.revealed]
            return f"waiting for {few_names(missing) or 'the reveal'} to reveal"
        if v.phase == "review":
            missing = [p.name for p in v.players if self.active(p) and not p.done]
            return f"waiting for {few_names(missing) or 'the table'} to finish the review"
        if v.phase == "over":
            return "the game was abandoned" if v.abandoned else "the game is over"
        return "waiting"

    def hides_choice(self, text: str) -> bool:
        """A category chosen while a card covers the list of them."""
        v = self.view
        return (
            v is not None
            and v.phase == "choose"
            and self.is_conjurer()
            and not v.paused
            and not text.strip().startswith("/")
        )

    def key_help(self, width: int = 80, draft: str = "") -> str:
        """The keys that work now, most useful first; what does not fit is left out, whole.
        ``draft``: what the input line holds (Enter sends it, even under a card)."""
        parts: list[str] = []
        v = self.view
        asking = self.quit_question is not None or self.kick_question is not None
        if asking:  # a y/n question: nothing can be typed meanwhile, and it comes before a card
            parts += ["y yes", "n/Esc no"]  # (the card's keys were shown: Esc said no)
        elif self.overlay is not None:
            # Enter sends a line typed, and the card goes with it: said as such (a newcomer
            # read "Enter/Esc close" over a draft and locked in a word they meant to keep).
            sends = draft.strip() and self.overlay.kind != "over" and not self.hides_choice(draft)
            parts += ["Enter send", "Esc close"] if sends else ["Enter/Esc close"]
            parts.append("PgUp/PgDn scroll")
        elif self.gave_up is not None:
            parts.append("r try again")
        elif self.seat_offered():
            parts.append("Enter take the seat")
        elif self.coming_back():
            pass  # Enter sends nothing until the room is back ("Enter send": a spectator's key
            # line while reconnecting, where nothing a spectator types is ever sent)
        elif self.wants_keys() and v is not None:
            if v.phase == "mark":
                parts.append(f"{span([p.seat + 1 for p in self.markable()])} toggle")
                parts.append("Enter confirm")
            elif self.confirm_word is not None:
                parts += ["y write it" if v.phase == "spell" else "y lock in", "n change it"]
            elif self.sub and self.prompt().rstrip().endswith("y/n:"):
                # (a question of the lobby or the review: its keys, not "Esc cancel" alone)
                parts += ["y yes", "n/Esc no"]
            elif self.sub:
                parts.append("Esc cancel")
        elif not self.asks_nothing():
            parts.append("Enter send")
            if self.form is not None and not self.form.for_create:
                # the settings, unchanged (a newcomer could not tell; "Esc leave" read as
                # leaving the room)
                parts.append("Esc keep settings")
        parts.append("^Q quit")
        if self.overlay is None:
            if self.joined and not self.spectator and self.ended is None and not asking:
                parts.append("/say chat")
            parts += ["F1 help", "F2 how to play"]
            if v is not None and v.results:
                parts.append("F3 results")
            parts.append("PgUp older")
            if self.is_host() and v is not None and v.phase not in ("lobby", "over"):
                parts.append("/pause /skip N /kick N")
        shown: list[str] = []
        for part in parts:
            if cells(" · ".join([*shown, part])) <= width:
                shown.append(part)
        return " · ".join(shown)
