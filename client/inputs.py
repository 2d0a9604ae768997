"""What a typed line or a key means, in every phase: the input handling of a Session.

:class:`Inputs` turns a line (:meth:`Inputs.submit`) or a key (:meth:`Inputs.key`) into messages
for the server, or into a :class:`Refused` sentence for the status line (the text is kept).
"""

from __future__ import annotations

import contextlib
import os
import re
import unicodedata
from collections.abc import Callable

from conjure.client.prompts import KICK_NAME, Prompts, quoted
from conjure.client.setupform import SetupForm
from conjure.client.statefile import ENV_LOCAL_SERVER
from conjure.client.tablestate import NARROWEST, RULES, StatusKind, status_rows
from conjure.client.textfit import shorten
from conjure.client.typos import meant
from conjure.protocol.cells import cells
from conjure.protocol.commitment import commitment, new_nonce
from conjure.protocol.counts import MAX_CRYSTALS
from conjure.protocol.events import RULE_TEXT, Rule, already_challenged
from conjure.protocol.messages import (
    CastVote,
    ChallengeWord,
    ChangeSettings,
    ChooseCard,
    ClientMsg,
    CommitSummon,
    JoinRoom,
    KickPlayer,
    Leave,
    MarkBoards,
    PauseGame,
    ProposalView,
    ProposeSame,
    ResumeGame,
    RevealSummon,
    ReviewDone,
    SeatOrder,
    SendChat,
    SkipPlayer,
    StartGame,
    WriteSpell,
    chat_problem,
    reason_problem,
)
from conjure.protocol.names import name_problem
from conjure.protocol.program import program_here
from conjure.protocol.wording import stars
from conjure.protocol.words import (
    contains_written,
    hidden_inside,
    is_known_noun,
    made_of_written,
    normalize,
    same_word,
    shape_problem,
    validate_written,
)

#: Keys that work on any screen: scrolling and the cards.
PAGE_KEYS = ("pageup", "pagedown")
CARD_KEYS = {"f1": "help", "f2": "howto", "f3": "results", "f4": "panel"}


#: Esc in the questions that make a new room: there is nothing to go back to.
SETTINGS_FOR_CREATE = "These questions make your room: answer them (b: from the top) or Ctrl-Q."

#: After a key that acts at once is refused, keys that follow less than this many seconds
#: apart do nothing: they are the rest of a mistyped sequence, not moves. Half a second: a
#: person who read the refusal and typed again at their own pace lost every key at one second
#: apart, each ignored key holding the keys shut a second more (found by a newcomer).
KEYS_PAUSE = 0.5
#: Seconds after the connection came back by itself in which an r is taken for the retry key
#: the screen offered a moment before (``late_retry_key``).
RETRY_LATE = 3.0
#: What a player refused a seat types to watch the room instead (``Session.watch_here``).
WATCH_WORDS = ("w", "watch")
CHOOSE_BY = "Type the number of a category, 1-%d, or its name."
#: The same with one category left ("1-1" read as a typo: seen by a newcomer).
CHOOSE_LAST = "Type 1 for the last category, or its name."
#: Said when a choice typed under a card is held until the categories are seen.
CHOOSE_SEEN = "Here are the categories: Enter again sends your choice."
#: A proposal everyone at the table would be barred from voting on is not sent (V1).
NOBODY_VOTES = (  # (rule V1; its id meant nothing on a player's screen: a newcomer)
    "Nobody may vote on that: every player wrote one of the words in question, so it would "
    "be rejected."
)
#: What the host of a game on someone else's server is asked on Ctrl-Q (the server's host_grace
#: passes the host on to a player who is there).
HOST_QUITS = "You host this game: the others will play on with a new host. Quit? y/n: "
#: /leave asks first: it gives the seat up for good and quits, and said nothing (found by
#: review: a player typed it mid-game and was at a blank terminal).
LEAVE_GAME = "Give up your seat in this game for good (no coming back)? y/n: "
LEAVE_LOBBY = "Leave this room (your seat goes)? y/n: "
LEAVE_QUESTIONS = (LEAVE_GAME, LEAVE_LOBBY)
KEYS_IGNORED = "(The keys right after it did nothing: type again.)"
#: How the status line begins when typed text was not sent (``Inputs._left_behind``).
NOT_SENT = "Not sent, "
RECONNECTING_KEPT = "Reconnecting: your text is kept; Enter sends it once you are back."


def keys_ignored(said: str) -> str:
    """``said`` and :data:`KEYS_IGNORED` after it; when both do not fit the status line whole,
    only the sentence's head before its first colon (a newcomer read "(The k…did  nothing" after
    the review's list of keys, which the key help shows anyway)."""
    joined = f"{said} {KEYS_IGNORED}"
    if status_rows(joined, NARROWEST)[1]:
        return joined
    return f"{said.split(': ', 1)[0].rstrip('.')}. {KEYS_IGNORED}"


def _choose_by(open_cards: int) -> str:
    return CHOOSE_LAST if open_cards == 1 else CHOOSE_BY % open_cards


def pasted_line(text: str) -> str:
    """A pasted block as the one line the input holds: its lines joined by a space each, for the
    player to see whole and mend before Enter sends anything."""
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


#: What a newcomer types at a word prompt when they want the program, not a word.
_COMMAND_LIKE = frozenset(("help", "quit", "exit", "q", "?"))


def unknown_word_warning(word: str) -> str | None:
    """A word of letters that is no noun the game knows: most likely a typo, which would match
    nobody (seen: 'peny' locked in without a word, and shown with the valid word's tick). A
    phrase is not judged (a good one is often in no dictionary: "space ship"); a word with a
    symbol in it (an emoji) is asked about too: it matches only the same text, symbol and all."""
    typed = normalize(word)
    if typed.casefold() in _COMMAND_LIKE:
        # A newcomer typed "help" (and "quit") at the word prompt: it was locked in as their
        # secret word without a question, or asked about as a typo of "suit".
        return f"'{word}' would be sent as your word: for help press F1, to quit Ctrl-Q."
    if not any(ch.isalpha() for ch in typed):
        # "?", "5" and "!!" went out as words without a question (seen), while "🚀" was asked.
        return f"'{word}' has no letters: it matches only the very same text."
    symbols = [ch for ch in typed if unicodedata.category(ch).startswith("S")]
    if symbols:  # an emoji or a sign: "rocket🚀" is not "rocket" (seen: "🚀" as a spell word)
        return f"'{word}' holds a symbol ({symbols[0]}): it matches only the same text, symbol and all."
    if not typed.isalpha() or is_known_noun(typed):
        return None
    bare = "".join(
        ch for ch in unicodedata.normalize("NFD", typed) if not unicodedata.combining(ch)
    )
    if bare != typed and is_known_noun(bare):
        # "Épée" was asked about while "epee" went without a word, which read as a contradiction
        # (seen): the accents are what the dictionary lacks, and they count when words match.
        return (
            f"'{word}' is a noun this game knows without its accents ('{bare}'): only a word "
            "with the same accents matches it."
        )
    close = meant(typed)
    if close:
        guesses = " or ".join([", ".join(close[:-1]), close[-1]] if len(close) > 1 else close)
        return f"'{word}' is not a noun this game knows: did you mean {guesses}?"
    return f"'{word}' is not a noun this game knows (a typo?): only the same word matches it."


class Inputs(Prompts):
    """Lines and keys from the player, turned into messages (or refusals)."""

    def send(self, msg: ClientMsg) -> None:
        # The player's first move of the next round closes the last round's results.
        card = self.overlay
        if (
            card is not None
            and card.kind == "results"
            and not isinstance(msg, SendChat | RevealSummon)
        ):
            self.close_card()
        super().send(msg)

    def key(self, key: str, page: int = 10) -> None:
        """One key: a printable character, 'enter', 'escape', 'pageup', 'pagedown', 'f1'-'f3'.

        ``page`` is how many lines PgUp/PgDn move (the screen knows how many are shown).
        """
        before, sent, asked = self.status, len(self.sent), self.prompt_owner()
        acting = self._acting_key(key)
        if acting and self.clock() < self._keys_ignored_until:
            # Still the burst that followed a refused key: the rest of a mistyped sequence
            # ("v 9 y good", no proposal 9) must not act key by key ("d": done, "s": same ...).
            self._keys_ignored_until = self.clock() + KEYS_PAUSE
            # Said, once: a newcomer's next keys did nothing and said nothing, as if unread.
            if self.status is not None and not self.status[1].endswith(KEYS_IGNORED):
                self.say(self.status[0], keys_ignored(self.status[1]))
            return
        try:
            self._any_key(key, page)
        except Refused as r:
            self.say("warn", str(r))
            if acting:
                self._keys_ignored_until = self.clock() + KEYS_PAUSE
            return
        finally:
            self._own_move(asked)
        self._past_warning(before, sent, asked)

    def late_retry_key(self) -> bool:
        """An r pressed as the screen asked, just after the connection came back by itself: it
        was meant for "r: try again", and is dropped (said so), once. Found by a newcomer: it
        landed in the summoning word the game was asking for by then ("Another word replaces
        it: r"). True if it was dropped."""
        back = self.back_unasked
        self.back_unasked = None  # one r at most, and only just after
        if back is None or self.clock() >= back + RETRY_LATE:
            return False
        self.say("info", "Back in the game by itself: that r was not needed, nothing was typed.")
        return True

    def _acting_key(self, key: str) -> bool:
        """A printable key of the review or the host's lobby, where keys act at once and come
        in sequences (a host typing "help" in the lobby: "h" refused, "e" opened the settings
        and "lp" answered its first question)."""
        v = self.view
        return (
            len(key) == 1
            and v is not None
            and v.phase in ("review", "lobby")
            and self.overlay is None
            and self.quit_question is None
            and self.gave_up is None
            and self.wants_keys()
        )

    def submit(self, text: str) -> bool:
        """A line typed and Enter pressed. True if it was used (clear the input line)."""
        before, sent, asked = self.status, len(self.sent), self.prompt_owner()
        try:
            if self.overlay is not None:
                if not text.strip():
                    self.close_card()
                    return True
                if self.hides_choice(text):
                    # The card hid the categories: show them, and keep the choice for the next
                    # Enter (seen: the next conjurer chose "1" blind under the round's results).
                    self.close_card()
                    self.say("info", CHOOSE_SEEN)
                    return False
                if self.overlay.kind != "over" and not text.strip().startswith("/"):
                    self.close_card()  # typing and sending is the next move (a chat is not)
            used = self._submit(text)
        except Refused as r:
            self.say("warn", str(r))
            return isinstance(r, RefusedCleared)
        finally:
            self._own_move(asked)
        self._past_warning(before, sent, asked)
        return used

    def _own_move(self, asked: tuple | None) -> None:
        """The player's own key or line changed the question (a sequence refused and begun
        again, a choice made): no change under them, so :meth:`settle_input` leaves what it
        said alone. (It took a refusal that reset a sequence for a new question, and cleared
        "You cannot remove yourself." before it was ever drawn: seen by a newcomer.)"""
        owner = self.prompt_owner()
        if owner != asked and self._owner == asked:
            self._owner = owner

    def _past_warning(
        self, before: tuple[StatusKind, str] | None, sent: int, asked: tuple | None
    ) -> None:
        """A warning or a refusal still on the status line is over once the player has made a
        move since, and anything said, once they have gone on to another question (and nothing
        new was said): it would read as being about that move, or that question ("Settings
        unchanged." stood under the start question: seen at 80x24)."""
        if before is None or self.status is not before:
            return
        if (len(self.sent) > sent and before[0] != "info") or self.prompt_owner() != asked:
            self.status = None

    def settle_input(self, text: str) -> str | None:
        """The input line's text after a change of state: None keeps ``text`` as it is.

        Each question owns what was typed for it (:meth:`Prompts.prompt_owner`). When the
        question changes (the clock closed the summon, the phase moved on), text typed for the
        old one is not carried into the new one: it is cleared, and the feed says what was not
        sent and why. A slash command is not an answer to a question, so it stays. Text the
        session hands back to the player (``draft``: the word of a "lock it in anyway?" that
        was declined) replaces the line.
        """
        asking = self.quit_question is not None or self.kick_question is not None
        if asking and text:
            # A y/n question takes the keys: what was typed waits aside (it stood after
            # "Quit? y/n:" as if it were the answer, and the y went into it: seen by a newcomer).
            self._held = (self._held or "") + text
            return ""
        if not asking and self._held is not None and not text:
            held, self._held = self._held, None
            return held
        owner = self.prompt_owner()
        result: str | None = None
        if owner is not None and owner != self._owner:
            old, self._owner = self._owner, owner
            self._keys_ignored_until = 0.0  # a new question: its keys act
            # (what ``_left_behind`` said of this very change stays)
            left = self.status is not None and self.status[1].startswith(NOT_SENT)
            if (
                old is not None
                and self.status is not None
                and self.status[0] != "info"
                and not left
            ):
                # A refusal of the old question ("Not your turn yet") stood over the prompt
                # that asked for the spell word once the turn came (seen by a newcomer).
                self.status = None
            if old is not None and text.strip() and not text.lstrip().startswith("/"):
                self._left_behind(old, text.strip())
                result = ""

        if self.draft is not None:
            result, self.draft = self.draft, None
        return result

    def _left_behind(self, owner: tuple, text: str) -> None:
        why = {
            "commit": "the summon closed",
            "secret": "the time for the secret word ran out",
            "spell": "your spell turn ended",
            "choose": "the choice of a category is over",
            "mark": "the crystals are placed",
            "review": "the question changed"
            if self._owner is not None and owner[1:3] == self._owner[1:3]
            else "the review ended",
            "wait": "it was not your turn",
            "lobby": "the game started",
            "name": "the name is no longer asked",
            "join": "the question changed",
        }.get(owner[0], "the question changed")
        shown = shorten(text, 40)
        # Said once: the feed keeps what was typed, for the player to type again; the status line
        # says it only while a card hides the feed.
        self.add_feed(f"not sent, {why}: '{shown}'", "error")
        # Said on the status line too: in the feed it went up out of sight within a second,
        # under the reveals and the review's lines (found by review).
        self.say("warn", f"{NOT_SENT}{why}: '{shown}'.")
        if self.overlay is not None:
            self.overlay.hid = self.status

    def _quit_confirmed(self) -> bool:
        """The host said yes to quitting a game that plays on: the server is told they left, so
        the role passes at once (a host who just went was waited for as away, 30 s in which
        nobody at the table could pause or skip: seen with friends). True: quit now."""
        if self.quit_question in LEAVE_QUESTIONS:
            self._leave_for_good()
        elif self.quit_question == HOST_QUITS and self.connected:
            self.send(Leave())
        else:
            self._pause_as_the_server_stops()
        return True

    def _pause_as_the_server_stops(self) -> None:
        """Quitting ``make play`` stops its server: the host pauses the game first, on its own
        connection. The launcher paused it after the client had gone, with the seat's token, and
        the others read "Ann is away. Ann is back. Ann paused the game." while the clock ran on
        (found by a newcomer)."""
        v = self.view
        if (
            os.environ.get(ENV_LOCAL_SERVER)
            and self.connected
            and self.joined
            and v is not None
            and v.phase not in ("lobby", "over")
            and not v.paused
            and self.is_host()
        ):
            self.send(PauseGame())
            self.paused_on_quit = True

    def request_quit(self) -> bool:
        """Ctrl-Q (or /quit): True to quit now; False when a question must be answered first.

        The host of ``make play`` runs the server itself (``$CONJURE_LOCAL_SERVER``): quitting
        stops it, so while other people are seated it asks first and says what happens to them.
        The host of a game on another server is asked too (``HOST_QUITS``). A second Ctrl-Q is a
        yes.
        """
        if self.quit_question in LEAVE_QUESTIONS:
            self.quit_question = None  # Ctrl-Q quits; the seat stays (not a yes to /leave)
        if self.quit_question is not None:
            return self._quit_confirmed()  # a second Ctrl-Q is a yes
        others = self.other_humans()
        if not others:
            self._pause_as_the_server_stops()
            return True
        if not os.environ.get(ENV_LOCAL_SERVER):
            v = self.view
            if v is not None and v.phase != "lobby" and self.is_host() and not self.ended:
                # A served game's host quit at once (only make play asked): the others play on.
                self.quit_question = HOST_QUITS
                self.status = None  # a refusal said before is not about this question
                return False
            return True
        # (in the lobby there is no game yet: "their game" read as one under way; and a game
        # is kept, paused, not stopped with the server: "stops their game" read as lost)
        tail = (
            "here: quitting stops the server and their room. Quit? y/n: "
            if self.in_lobby
            else "playing: quitting pauses the game, stops the server. Quit? y/n: "
        )
        n = len(others)
        question = f"{others[0]} is {tail}" if n == 1 else f"{' and '.join(others)} are {tail}"
        if cells(question) > 78:  # the prompt line stays one line at 80 columns
            question = f"{n} other{' is' if n == 1 else 's are'} {tail}"
        self.quit_question = question
        self.status = None
        return False

    def _leave_for_good(self) -> None:
        """/leave, said yes to: the seat is given up and forgotten (``client.app.farewell``
        says so)."""
        if self.connected:
            self.send(Leave())
        if self.room:
            with contextlib.suppress(OSError):
                self.store.forget_seat(self.server, self.room)
        self.token = None
        self.gave_up_seat = True

    def other_humans(self) -> list[str]:
        """Connected players who are neither you nor computer players (marked on the board)."""
        v = self.view
        if v is None or v.phase == "over":
            return []
        return [
            p.name
            for p in v.players
            if p.connected and not p.you and not p.kicked and not p.computer
        ]

    def _any_key(self, key: str, page: int) -> None:
        if self.quit_question is not None:  # the host's question comes first
            if key in ("y", "Y"):
                self.quit_requested = self._quit_confirmed()
            elif key in ("n", "N", "escape"):
                self.quit_question = None
                self.say(
                    "info", "Still here." if self.in_lobby else "Still here: the game goes on."
                )
            return
        if self.kick_question is not None:
            _question, seat, meant = self.kick_question
            if key in ("y", "Y"):
                self.kick_question = None
                self._need_connection()
                self.send(KickPlayer(seat=seat, player_id=meant))
            elif key in ("n", "N", "escape"):
                self.kick_question = None
                self.say("info", "Nobody removed.")
            return
        if key in PAGE_KEYS:
            self.scroll(-page if key == "pageup" else page)
            return
        if key == "?":  # where keys act, the key people try for help (F1 is said on screen)
            key = "f1"
        if key in CARD_KEYS:
            self._toggle_card(CARD_KEYS[key])
            return
        if self.overlay is not None:
            self.close_card()  # a key on a card closes it, and does nothing else but a move:
            if self._acting_key(key) and key != " ":  # in the review or the host's lobby, a
                self._key(key)  # letter was swallowed, the move not made (found by review)
            return
        self._key(key)

    def scroll(self, lines: int) -> None:
        """Move the open card, or the feed, by ``lines`` (negative: back, towards older)."""
        if self.overlay is not None:
            self.overlay.scroll = max(0, self.overlay.scroll + lines)
        else:
            self.feed_scroll = max(0, self.feed_scroll - lines)

    def _toggle_card(self, kind: str) -> None:
        if self.overlay is not None and self.overlay.kind == kind:
            self.close_card()
            return
        if kind == "results":
            v = self.view
            if v is None or not v.results:
                raise Refused("No round has ended yet.")
            self.open_card("over" if v.phase == "over" else "results", v.results[-1].round)
        elif kind == "help":
            self.open_card("help")
        elif kind == "panel":
            self.open_card("panel")
        else:
            self.open_card("howto")

    def _need_connection(self) -> None:
        if not self.connected:
            raise Refused("Not connected right now: your text is kept, press Enter again later.")

    def _key(self, key: str) -> None:
        if key == "escape" and self.form is not None:
            # The help line promises "Esc: cancel a choice": a host in the settings had to
            # answer all six questions to get out (seen by a newcomer).
            if self.form.for_create:
                raise Refused(SETTINGS_FOR_CREATE)
            self.form = None
            self.say("info", "Settings unchanged.")
            return
        if key == "escape":
            self._keys_ignored_until = 0.0  # a deliberate key: the mistyped burst is over
            if self.confirm_word is not None:
                self.draft = self.confirm_word  # back in the input line, to change it
            kept = "Not started: the room waits." if self.sub == ("start",) else None
            self.sub = ()
            self.confirm_word = None
            self.status = None if kept is None else ("info", kept)  # (n says the same)
            return
        if not self.wants_keys():
            return
        if self.gave_up is not None:
            if key.lower() != "r":
                raise Refused("Press r to try again, or Ctrl-Q to quit.")
            self.try_again()
            return
        v = self.view
        assert v is not None
        if self.confirm_word is not None and self.confirming():
            self._confirm_key(key)
        elif v.phase == "lobby":
            self._lobby_key(key)
        elif v.phase == "mark":
            self._mark_key(key)
        elif v.phase == "review":
            self._review_key(key)

    def try_again(self) -> None:
        """After a give-up: try to reach the server again (``client.session.Session``)."""
        raise NotImplementedError

    def _confirm_key(self, key: str) -> None:
        """The answer to "lock it in anyway?": y locks the word in, n gives it back to change."""
        word = self.confirm_word
        assert word is not None
        if key.lower() == "y":
            self.confirm_word = None
            v = self.view
            try:
                if v is not None and v.phase == "spell":
                    self._spell(word, check=False)
                else:
                    self._commit(word, check=False)
            except Refused:
                self.draft = word  # not sent (no connection, no disk): the word is kept
                raise
        elif key.lower() == "n":
            self.confirm_word = None
            self.draft = word
            self.status = None
        else:
            raise Refused(f"Press y to lock in {quoted(word)} anyway, or n to change it.")

    def _lobby_key(self, key: str) -> None:
        v = self.view
        assert v is not None  # the caller's check: keys are read with a view
        if self.sub == ("kick",):
            seat = self._board_number(key)
            if seat == self.seat:
                self.sub = ()
                raise Refused("You cannot remove yourself.")
            # Asked first (one wrong digit removed a friend), and the player asked about is the
            # one removed: the seats shift if someone leaves meanwhile (found by review).
            who = self.player(seat)
            self.sub = ("kick", seat, who.id if who else None)
            return
        if self.sub and self.sub[0] == "kick":
            ask = "Press y to remove them, or n (or Esc) to keep them."
            kick = KickPlayer(seat=self.sub[1], player_id=self.sub[2])
            self._lobby_answer(key, kick, None, "Nobody removed.", ask)
            return
        if self.sub == ("start",):
            ask = "Press y to start the game, or n (or Esc) to wait."
            done, kept = "Starting the game…", "Not started: the room waits."
            self._lobby_answer(key, StartGame(), done, kept, ask)
            return
        if key == "s":  # asked first: a host typing "sure" in the lobby started the game
            self._need_connection()
            n = len([p for p in v.players if not p.kicked])
            if n < 3:
                # Where more players come from, said (a host who had removed make play's
                # computer players had no way back: found by review).
                bot = f"{program_here()} bot {self.server} --room {v.room}"
                whole = (
                    f"A game needs at least 3 players; {n} seated so far. A computer player: {bot}"
                )
                if not status_rows(whole, NARROWEST)[1]:
                    whole = f"A game needs at least 3 players; {n} seated so far."
                raise Refused(whole)
            self.sub = ("start",)
        elif key == "e":
            self.form = SetupForm(settings=v.settings, for_create=False)
        elif key == "k":
            self.sub = ("kick",)
        elif len(key) == 1 and key.isprintable() and not key.isspace():
            # A newcomer's stray key did nothing at all, so they could not tell it was read.
            raise Refused(
                f"{key!r} does nothing in the lobby: s starts the game, e changes the settings, "
                "k removes a player."
            )

    def _lobby_answer(
        self, key: str, yes: ClientMsg, done: str | None, kept: str, ask: str
    ) -> None:
        """The host's answer to a question of the lobby: y sends ``yes`` (and says ``done``), n
        says ``kept``; any other key is refused with ``ask``."""
        if key.lower() == "y":
            self.sub = ()
            self._need_connection()
            self.send(yes)
            if done is not None:
                self.say("info", done)
        elif key.lower() == "n":
            self.sub = ()
            self.say("info", kept)
        else:
            raise Refused(ask)

    def _board_number(self, text: str) -> int:
        if text == "enter":  # Enter on its own, while a board number is asked
            raise Refused("Type a board number first (Esc cancels).")
        try:
            n = int(text.strip())
        except ValueError:
            raise Refused(f"{text.strip()!r} is not a board number.") from None
        if self.player(n - 1) is None:
            raise Refused(f"There is no board {n}.")
        return n - 1

    def _mark_key(self, key: str) -> None:
        if key == "enter":
            self._confirm_marks()
            return
        if not key.isdecimal():  # ("²", a key of French keyboards, is a digit int() refuses)
            return
        seat = int(key) - 1
        p = self.player(seat)
        if p is None:
            raise Refused(f"There is no board {key}.")
        if not p.spell:
            raise Refused(f"Board {key} ({p.name}) has no spell word to mark.")
        if seat in self.marks:
            self.marks.discard(seat)
        else:
            if len(self.marks) >= MAX_CRYSTALS:
                raise Refused(f"You have only {MAX_CRYSTALS} crystals; remove one first.")
            self.marks.add(seat)
        self.status = None

    def _confirm_marks(self) -> None:
        low, high = self.crystal_range()
        n = len(self.marks)
        if n == 0 and low == 0 and self.no_crystal_asked != self._round_key():
            # Dark Magic allows none, but a stray Enter gave the round's clue away at once
            # (found by a newcomer): asked once a round.
            self.no_crystal_asked = self._round_key()
            raise Refused(
                "No crystal placed: Enter again places none; a board's number toggles one."
            )
        if n < low:
            raise Refused(f"Place at least {low} crystals ({n} placed).")
        if n > high:
            raise Refused(f"Place at most {high} crystals ({n} placed).")
        self._need_connection()
        self.send(MarkBoards(boards=sorted(self.marks)))
        words = self.marked_spells()
        self.say("info", f"Crystals placed on {words or 'no board'}.")

    def _not_yours(self, p: ProposalView) -> str:
        """Why this player does not vote on ``p`` (rule V1), as a sentence."""
        me = self.me
        if me is not None and me.skipped:
            return "You are skipped this round, so you do not vote."
        words = " and ".join(quoted(w) for w in p.words) or "the words"
        return (
            f"Proposal {p.id + 1} is about your word ({words}): the players it does not "
            "concern vote on it."  # (rule V1: its id meant nothing on a player's screen)
        )

    def _why_no_vote(self) -> str:
        open_ = self.open_proposals()
        if not open_:
            return "There is no open proposal to vote on."
        return self._not_yours(open_[0])

    def _not_challenged_yet(self, seat: int, rule: Rule) -> None:
        """Refuse here a challenge the server would refuse as made already (V5), so that the
        keys typed after it do nothing: the server's refusal came after them, and a newcomer's
        'c 2 1 d' went on to say done."""
        v = self.view
        assert v is not None
        word = v.players[seat].summon if 0 <= seat < len(v.players) else None
        if word is None:
            return
        for p in v.proposals:
            if p.kind != "challenge" or p.rule != rule or not p.seats:
                continue
            theirs = v.players[p.seats[0]].summon if 0 <= p.seats[0] < len(v.players) else None
            if theirs is not None and same_word(theirs, word):
                self.sub = ()
                raise Refused(already_challenged(word, rule, p.id))

    def _challenge(self, seat: int, rule: Rule) -> None:
        self._need_connection()
        self.sub = ()
        self.send(ChallengeWord(seat=seat, rule=rule))
        self.say("info", f"You challenged {self.pname(seat)}'s word: it {RULE_TEXT[rule]}.")

    def _review_key(self, key: str) -> None:
        sub = self.sub
        v = self.view
        assert v is not None
        if not sub:
            if key == "c":
                self.sub = ("challenge",)
            elif key == "s":
                self.sub = ("same",)
            elif key == "v":
                votable = self.votable()
                if not votable:
                    raise Refused(self._why_no_vote())
                self.sub = ("vote", votable[0].id) if len(votable) == 1 else ("vote",)
            elif key == "d":
                me = self.me
                if me is not None and me.done:
                    raise Refused("You have already said you are done.")
                self._need_connection()
                self.send(ReviewDone())
                self.say("info", "You are done with the review.")
            elif len(key) == 1 and key.isprintable() and not key.isspace():
                # A stray key did nothing at all, so a newcomer could not tell it was read.
                raise Refused(
                    f"{key!r} does nothing in the review: c challenges a word, s proposes two "
                    "words as the same thing, v votes, d says you are done."
                )
            return
        if key in ("enter", " "):  # spaces between keys, as the help writes them ('c 2 1')
            return
        if sub == ("challenge",):
            seat = self._summon_board(key)
            if self.lone_vote(seat) == "nobody":  # said at once, not after a rule was picked
                self.sub = ()
                raise Refused(NOBODY_VOTES)
            self.sub = ("challenge", seat)
        elif sub[0] == "challenge" and len(sub) == 3:  # "your vote alone decides": y/n
            self._alone_answer(key, lambda: self._challenge(sub[1], sub[2]), "No challenge made.")
        elif sub[0] == "challenge":
            try:
                rule = RULES[int(key) - 1]
            except (ValueError, IndexError):
                raise Refused(f"Pick a rule by its number, 1-{len(RULES)}.") from None
            self._not_challenged_yet(sub[1], rule)
            if self.challenge_alone(sub[1]):
                self.sub = ("challenge", sub[1], rule)  # ask first: nobody else votes on it
                return
            self._challenge(sub[1], rule)
        elif sub == ("same",):
            self.sub = ("same", self._summon_board(key))
        elif sub[0] == "same" and len(sub) == 3:  # "your vote alone decides": y/n
            self._alone_answer(key, lambda: self._propose_same(sub[1], sub[2]), "No proposal made.")
        elif sub[0] == "same":
            other = self._summon_board(key)
            if other == sub[1]:
                raise Refused("Pick another player's board.")
            lone = self.lone_vote(sub[1], other)
            if lone == "nobody":
                self.sub = ()
                raise Refused(NOBODY_VOTES)
            if lone == "you":
                self.sub = ("same", sub[1], other)  # ask first: nobody else votes on it
                return
            self._propose_same(sub[1], other)
        elif sub == ("vote",):
            try:
                pid = int(key) - 1
            except ValueError:
                raise Refused("Pick a proposal by its number.") from None
            found = [p for p in v.proposals if p.id == pid]
            if not found:
                raise Refused(f"There is no proposal {key}.")
            if found[0].carried is not None:
                verdict = "carried" if found[0].carried else "rejected"
                raise Refused(f"Proposal {key} is settled: {verdict}.")
            if found[0] not in self.votable():
                raise Refused(self._not_yours(found[0]))
            self.sub = ("vote", pid)
        elif sub[0] == "vote" and len(sub) == 2:
            if key.isdecimal():  # a proposal's number: the help's 'v 1 y' with one to vote on
                self.sub = ("vote",)
                try:
                    self._review_key(key)
                except Refused:
                    self.sub = sub
                    raise
                return
            if key.lower() not in ("y", "n"):  # (a stray key did nothing and said nothing)
                raise Refused(f"Vote on proposal {sub[1] + 1}: y for yes, n for no (Esc cancels).")
            self.sub = ("vote", sub[1], key.lower() == "y")

    def _alone_answer(self, key: str, act: Callable[[], None], declined: str) -> None:
        """The answer to "only you vote on it: make it?": y makes it, n says ``declined``."""
        if key.lower() == "y":
            act()
        elif key.lower() == "n":
            self.sub = ()
            self.say("info", declined)
        else:
            raise Refused("Answer y or n (Esc cancels).")

    def _propose_same(self, a: int, b: int) -> None:
        self._need_connection()
        self.sub = ()
        self.send(ProposeSame(a=a, b=b))
        self.say("info", "You proposed that the two words name the same thing.")

    def _summon_board(self, text: str) -> int:
        seat = self._board_number(text)
        p = self.player(seat)
        if p is None or not p.summon:
            raise Refused(f"Board {seat + 1} has no summoning word.")
        return seat

    def _submit(self, text: str) -> bool:
        if self.form is not None:
            return self._form_answer(text)
        stripped = text.strip()
        if stripped.startswith("/"):
            return self._command(stripped)
        if self.join_field is not None and not self.joined:
            return self._join_answer(text)
        if not self.name and not self.spectator and not self.token:
            if not stripped:  # (Enter alone did nothing, and said nothing: seen)
                raise Refused("Type the name to play under (the others see it), then Enter.")
            if problem := name_problem(stripped):
                raise Refused(problem)
            self.name = stripped
            if self.connected and not self.joined:
                for m in self.join_messages():
                    self.send(m)
            return True
        if self.seat_offered():
            if stripped:
                raise RefusedCleared("Enter alone takes the free seat: nothing was sent.")
            self.joining = "join"
            self.send(JoinRoom(room=self.room or "", name=self.name or "", password=self.password))
            self.say("info", "Taking the free seat…")
            return True
        if self.wants_keys():
            if self.sub and self.sub[0] == "vote" and len(self.sub) == 3:
                pass  # handled below: the reason line
            elif not stripped:
                self._key("enter")
                return True
            else:
                return self._keys_as_line(stripped)
        v = self.view
        me = self.me
        if self.sub and self.sub[0] == "vote" and len(self.sub) == 3 and v is not None:
            self._need_connection()
            _, pid, yes = self.sub
            reason = stripped[:200]
            if problem := reason_problem(reason):
                raise Refused(problem + ": your text is kept.")
            self.send(CastVote(proposal=pid, yes=yes, reason=reason))
            self.sub = ()
            self.say("info", f"You voted {'yes' if yes else 'no'} on proposal {pid + 1}.")
            return True
        if not stripped:
            move = self._typed_move()
            if move is not None and move[0] is not None:  # (Enter alone said nothing: seen)
                raise Refused(f"Type {move[0]} first, then Enter: Enter alone sends nothing.")
            return False
        if self.spectator and (self.joined or self.coming_back()):
            # Let go of: kept, the next text was added to it ("hello/say hi": a newcomer).
            raise RefusedCleared("You are watching: spectators do not play, so nothing was sent.")
        if self.coming_back():  # (it said "Not in a room yet" to a player in a game)
            raise Refused(RECONNECTING_KEPT)
        if v is None or me is None or not self.joined:
            raise Refused("Not in a room yet: your text is kept.")
        if v.paused:
            raise Refused("The game is paused: your text is kept.")
        if (move := self._typed_move()) is not None:
            return move[1](stripped)
        if v.phase == "lobby":  # ("not your turn" read oddly before any game: a review)
            starts = "you start it with s" if self.is_host() else "the host starts it"
            raise Refused(
                f"The game has not started ({starts}): nothing was sent (/say sends a chat)."
            )
        raise Refused("Not your turn yet: nothing was sent (/say sends a chat).")

    def _typed_move(self) -> tuple[str | None, Callable[[str], bool]] | None:
        """What a line typed now does, and what the table waits for this player to type, as a
        phrase (None once nothing more is asked: a locked-in word may still be changed). One
        place for both, so the hint Enter alone gets and the line sent never disagree."""
        v, me = self.view, self.me
        if v is None or me is None or not self.joined or v.paused:
            return None
        if v.phase == "choose" and self.is_conjurer():
            return "a category's number or name", self._choose
        if v.phase == "spell" and v.turn == v.you:
            return "your spell word", lambda text: self._spell(text, check=True)
        summoning = v.phase == "dark-commit" and self.is_conjurer()  # (no spell word yet)
        if summoning or (v.phase == "commit" and any(p.seat == me.seat for p in self.summoners())):
            asked = None if me.committed or self.my_word() is not None else "your summoning word"
            return asked, lambda text: self._commit(text, check=True)
        return None

    def _join_answer(self, text: str) -> bool:
        """The part of the join a refusal asked for: a room code, a password or a name."""
        field = self.join_field
        stripped = text.strip()
        offered = field in ("watch", "again") and self.watch_instead is not None
        if (field == "watch" and not stripped) or (offered and stripped.lower() in WATCH_WORDS):
            self.watch_here()
            return True
        if field == "watch":
            if not re.fullmatch(r"[A-Za-z]{4}", stripped):
                # Let go of, and said what it is not: kept, the next Enter sent it again
                # instead of watching (found by a newcomer).
                raise RefusedCleared(
                    f"{quoted(shorten(stripped, 20))} is no room code (4 letters): Enter "
                    "watches the game, or type another room's code."
                )
            field = "room"  # another room, to sit in: the offer to watch this one is over
            self.watch_instead = None
        if field == "room":
            if not re.fullmatch(r"[A-Za-z]{4}", stripped):
                raise Refused("A room code is 4 letters, as the host's screen shows it.")
            self.room = stripped.upper()
            self.token = None
            if not self.spectator:
                self._load_seat()
        elif field == "password":
            secret = text.strip("\r\n")
            if not secret:
                raise Refused("Type the room's password (the host has it), or Ctrl-Q to quit.")
            if len(secret) > 64:
                raise Refused("A password has at most 64 characters.")
            self.password = secret
        elif field == "name":
            if not stripped:
                raise Refused("Type the name to play under (the others see it), then Enter.")
            if problem := name_problem(stripped):
                raise Refused(problem)
            self.name = stripped
        self.join_again()
        return True

    def _load_seat(self) -> None:
        raise NotImplementedError

    def _keys_as_line(self, text: str) -> bool:
        """A whole line typed in a keys state: '1 3 4' marks, 'c 2 1' challenges, ..."""
        v = self.view
        assert v is not None
        tokens = text.replace(",", " ").split()
        if v.phase == "mark":
            seats = set()
            for t in tokens:
                seat = self._board_number(t)
                seats.add(seat)
            for seat in seats:
                p = self.player(seat)
                if p is None or not p.spell:
                    raise Refused(f"Board {seat + 1} has no spell word to mark.")
            self.marks = seats
            self._confirm_marks()
            return True
        saved = self.sub
        try:
            for i, t in enumerate(tokens):
                if self.sub and self.sub[0] == "vote" and len(self.sub) == 3:
                    reason = " ".join(tokens[i:])
                    return self._submit(reason)
                self._key(t if len(t) == 1 or not t.isalpha() else t[0])
            if self.sub and self.sub[0] == "vote" and len(self.sub) == 3:
                return self._submit("")
        except Refused:
            self.sub = saved
            raise
        return True

    def _choose(self, text: str) -> bool:
        v = self.view
        assert v is not None
        open_cards = [c for c in v.cards if not c.used]
        try:
            n = int(text)
        except ValueError:
            # Its name works too, or the start of it when only one card begins so: a newcomer
            # typed "footwear", and "musical" for Musical instrument, and was told to type a number.
            typed = text.strip().casefold()
            cased = [(i, c.text.casefold()) for i, c in enumerate(open_cards, 1)]
            named = [i for i, t in cased if t == typed] or [
                i for i, t in cased if typed and t.startswith(typed)
            ]
            if len(named) != 1:
                raise Refused(_choose_by(len(open_cards))) from None
            n = named[0]
        if not 1 <= n <= len(open_cards):
            raise RefusedCleared(_choose_by(len(open_cards)))
        card = open_cards[n - 1]
        self._need_connection()
        self.send(ChooseCard(card=card.index))
        self.say("info", f"You chose {card.text} {stars(card.stars)}.")
        return True

    def word_warning(self, word: str) -> str | None:
        """A warning if the word is, contains or seems to hide a written spell word, or is a
        word of letters no dictionary of the game knows (a typo, most likely)."""
        v = self.view
        if v is None:
            return None
        written = [(p, p.spell) for p in v.players if p.spell]
        for p, spell in written:
            if contains_written(word, spell):
                what = "is" if same_word(word, spell) else "contains"
                whose = "your" if p.seat == v.you else f"{p.name}'s"
                return f"Your word {what} '{spell}' ({whose} spell word): it would be invalid, -3."
        if made_of := made_of_written(word, tuple(spell for _, spell in written)):
            joined = " and ".join(f"'{written[i][1]}'" for i in dict.fromkeys(made_of))
            return f"Your word is the spell words {joined} joined: it would be invalid, -3."
        for p, spell in written:
            if hidden_inside(word, spell):
                whose = "your" if p.seat == v.you else f"{p.name}'s"
                return (
                    f"'{spell}' ({whose} spell word) seems hidden inside your word: "
                    "the table may rule it invalid, -3."
                )
        return unknown_word_warning(word)

    def _ask_first(self, word: str, warning: str | None) -> bool:
        """With a ``warning``: ask y/n before ``word`` is sent (True). A real question, never an
        edit of the word: it leaves the input line (``confirm_word``)."""
        self.confirm_word = word if warning else None
        if warning:
            self.say("warn", warning)
        return bool(warning)

    def _spell(self, word: str, *, check: bool) -> bool:
        problem = validate_written(word) or shape_problem(word, summon=False)
        if problem:
            raise Refused(problem)
        # Seen: 'ancher' (for anchor) went on the board as everyone's clue, unremarked.
        if check and self._ask_first(word, unknown_word_warning(word)):
            return True
        self._need_connection()
        self.send(WriteSpell(word=word))
        return True

    def _commit(self, word: str, *, check: bool) -> bool:
        problem = validate_written(word) or shape_problem(word, summon=True)
        if problem:
            raise Refused(problem)
        if check and self._ask_first(word, self.word_warning(word)):
            return True
        self._need_connection()
        v = self.view
        key = self._round_key()
        assert v is not None and key is not None
        game_id, round_, seat = key
        nonce = new_nonce()
        digest = commitment(game_id, round_, seat, nonce, word)
        try:
            self.store.save_summon(
                game_id, round_, seat, word=word, nonce=nonce.hex(), commitment=digest
            )
        except OSError as exc:
            raise Refused(
                f"Could not save your word in {self.store.path} ({exc.strerror}); not sent."
            ) from None
        self._my_words[key] = word
        self._reveal_index.pop(key, None)
        self.send(CommitSummon(commitment=digest))
        self.say("info", f"'{word}' is locked in; it will be revealed when everyone is ready.")
        return True

    def _form_answer(self, text: str) -> bool:
        form = self.form
        assert form is not None
        if text.strip().startswith("/") and text.strip() in ("/quit", "/help", "/howto"):
            return self._command(text.strip())
        error = form.answer(text)
        if error:
            self.say("warn", error)
            # A short answer is quicker typed again than mended, and Enter then keeps the
            # value in [brackets] as the question says (a refused '3' stayed, and was sent
            # again: a newcomer); a longer one (a list of times, a file) is kept to mend.
            return len(text.strip()) <= 3
        self.status = None if form.notice is None else ("info", form.notice)
        if form.step == "done":
            self.form = None
            self.pending_settings = form.settings
            if form.for_create:
                if self.connected:
                    for m in self.join_messages():
                        self.send(m)
            elif self.view is not None and form.settings == self.view.settings:
                self.say("info", "Settings unchanged.")
            else:
                self._need_connection()
                self.send(ChangeSettings(settings=form.settings))  # the feed says it changed
        return True

    def _command(self, text: str) -> bool:
        word, _, rest = text[1:].partition(" ")
        word = word.lower()
        rest = rest.strip()
        if word in ("say", "chat", "s"):
            if self.spectator:
                raise RefusedCleared("Spectators cannot chat.")  # (stayed on the line: seen)
            if not rest:
                raise Refused("Type something after /say.")
            text = rest[:300]
            if problem := chat_problem(text):
                raise Refused(problem + ": your text is kept.")
            self._need_connection()
            self.send(SendChat(text=text))
            self.last_chat = text
            return True
        if word in ("help", "h", "?"):
            self.open_card("help")
            return True
        if word in ("howto", "rules", "how"):
            self.open_card("howto")
            return True
        if word in ("results", "result", "r"):
            self._toggle_card("results")
            return True
        if word in ("quit", "q", "exit"):
            self.quit_requested = self.request_quit()
            return True
        if word == "leave":
            self._need_connection()
            if self.spectator or self.me is None:
                self.send(Leave())  # no seat to give up: as a quit
                self.quit_requested = True
                return True
            self.quit_question = LEAVE_LOBBY if self.in_lobby else LEAVE_GAME
            self.status = None
            return True
        if word in ("pause", "resume", "skip", "kick", "start", "settings", "order"):
            if not self.is_host():
                # Let go of, as an unknown command is: nothing to mend in it, and kept, the
                # next command typed was glued to it ("/kick 2/pause", seen with friends).
                raise RefusedCleared("Only the host can do that.")
            self._need_connection()
            if word == "pause":
                self.send(PauseGame())
            elif word == "resume":
                self.send(ResumeGame())
            elif word == "start":
                self.send(StartGame())
            elif word == "order":
                self.send(SeatOrder(order=self._seat_order(rest)))
            elif word == "settings":
                if self.view is None or self.view.phase != "lobby":
                    raise Refused("Settings can change only in the lobby.")
                self.form = SetupForm(settings=self.view.settings, for_create=False)
            else:
                seat = self._board_number(rest)
                if word == "kick":  # for the whole game: asked first, as in the lobby
                    who = self.player(seat)
                    name = shorten(who.name if who else "?", KICK_NAME)
                    where = "room" if self.in_lobby else "game for good"
                    self.kick_question = (
                        f"Remove {name} (board {seat + 1}) from the {where}? y/n: ",
                        seat,
                        who.id if who else None,
                    )
                else:
                    self.send(SkipPlayer(seat=seat))
            return True
        # Said, and the line cleared: it names the command again, and text kept on the line was
        # glued to the next thing typed ("/foo/say hi all"), seen at 80x24.
        self.say("warn", f"Unknown command /{word}; /help lists them.")
        return True

    def _seat_order(self, rest: str) -> list[int]:
        """``/order 3 1 2``: the boards, by their current numbers, in their new seating order."""
        if self.view is None or self.view.phase != "lobby":
            raise Refused("Seats can be reordered only in the lobby.")
        n = len(self.view.players)
        try:
            boards = [int(x) for x in rest.replace(",", " ").split()]
        except ValueError:
            boards = []
        if sorted(boards) != list(range(1, n + 1)):
            raise Refused(f"List every board 1-{n} once, in the new order: /order 2 1 3")
        return [b - 1 for b in boards]

    quit_requested = False
    #: The last chat line sent, until the server took or refused it (``chat_busy``).
    last_chat: str | None = None


class Refused(Exception):
    """An input the client refuses locally, with the sentence to show."""


class RefusedCleared(Refused):
    """A refused input the line lets go of: a number, quicker typed again than mended (seen: a
    newcomer's wrong category number stayed in the line, to be deleted before the right one)."""
