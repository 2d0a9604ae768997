"""The rules of Conjure as a pure decider: ``decide(state, command)`` and ``evolve(state, event)``."""

from protocol.errors import Refusal
from server.rules.decide import decide
from server.rules.evolve import evolve, fold
from server.rules.state import Game

__all__ = ["Game", "Refusal", "decide", "evolve", "fold"]
