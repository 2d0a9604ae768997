"""The error codes a server sends (``Error.code``) and the one refusal that carries them.

Stated once: the rules engine, the lobby, the rooms and the connection limits all refuse with a
:class:`Refusal`, and docs/PROTOCOL.md's error tables are checked against :data:`ErrorCode`.
A client still decodes any string as a code (a newer server may send a code this one lacks).
"""

from __future__ import annotations

from typing import Literal, TypeVar, get_args

E = TypeVar("E", bound=BaseException)

ErrorCode = Literal[
    # Protocol and room errors (the server, the lobby, the limits)
    "malformed",
    "invalid_message",
    "binary_frame",
    "hello_required",
    "protocol_version",
    "already_greeted",
    "unknown_room",
    "room_closed",
    "already_in_room",
    "not_in_room",
    "spectator",
    "no_spectators",
    "wrong_password",
    "bad_token",
    "kicked",
    "name_taken",
    "bad_name",
    "room_full",
    "already_started",
    "not_started",
    "not_host",
    "unknown_seat",
    "cannot_kick_self",
    "seat_changed",
    "present",
    "bad_order",
    "bad_settings",
    "player_count",
    "deck_too_small",
    "no_default_deck",
    "log_unavailable",
    "server_full",
    "server_busy",
    "too_many_connections",
    "connection_rate",
    "password_required",
    "dealing",
    "not_dealing",
    "already_contributed",
    "rate_limited",
    "room_rate",
    "too_many_guesses",
    "too_many_rooms",
    "spectators_full",
    "chat_busy",
    "hello_timeout",
    "roomless_timeout",
    "shutting_down",
    "too_many_actions",
    "internal",
    "unexpected",
    # Game errors (the rules engine)
    "out_of_phase",
    "not_your_turn",
    "paused",
    "not_paused",
    "game_over",
    "skipped",
    "bad_card",
    "bad_word",
    "bad_marks",
    "bad_commitment",
    "copied_commitment",
    "commits_closed",
    "reveal_too_early",
    "no_commitment",
    "already_revealed",
    "reveal_mismatch",
    "bad_rule",
    "no_word",
    "already_invalid",
    "exempt",
    "already_same",
    "bad_proposal",
    "duplicate_proposal",
    "too_many_proposals",
    "unknown_proposal",
    "proposal_settled",
    "not_a_voter",
    "already_done",
    "already_skipped",
    "already_host",
    "too_early",
    "bad_seats",
    "bad_colours",
    "bad_deal",
    "bad_rules",
    "unknown_command",
]

#: Every code in :data:`ErrorCode`, for checks at run time and in tests.
ERROR_CODES: frozenset[str] = frozenset(get_args(ErrorCode))


class Refusal(Exception):
    """A refused request or command: a stable ``code`` for programs and a sentence for people.

    Raised inside the server; the rules engine's ``decide`` returns one instead of raising.
    """

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code: ErrorCode = code
        self.message = message

    def __eq__(self, other: object) -> bool:
        """A value, as the engine's answer: equal code and message are the same refusal."""
        if not isinstance(other, Refusal):
            return NotImplemented
        return (self.code, self.message) == (other.code, other.message)

    def __hash__(self) -> int:
        return hash((self.code, self.message))

    def __repr__(self) -> str:
        return f"Refusal({self.code!r}, {self.message!r})"


def first_of(exc: BaseException, kind: type[E]) -> E | None:
    """The first ``kind`` in ``exc`` or, depth first, in the exception groups it holds: what a
    task group raised, asked "was it this?" (a refused certificate, an address in use)."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = first_of(inner, kind)
            if found is not None:
                return found
    return None
