"""The rules of Conjure as a pure decider: ``decide(state, command)`` and ``evolve(state, event)``."""

from conjure.protocol.errors import Refusal
from conjure.server.rules.decide import decide
from conjure.server.rules.evolve import evolve, fold
from conjure.server.rules.state import Game

__all__ = ["Game", "Refusal", "decide", "evolve", "fold"]
