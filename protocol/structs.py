"""The frozen, keyword-only struct base that type checkers can read.

msgspec hands ``frozen`` and ``kw_only`` down to subclasses at runtime, but PEP 681 checkers only
know what ``dataclass_transform`` tells them: without this base every subclass of a frozen struct
is reported as "a non-frozen class cannot inherit from a frozen one", and checkers miss writes to
fields and positional construction.
"""

from __future__ import annotations

from typing import dataclass_transform

import msgspec


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(msgspec.field,))
class FrozenStruct(msgspec.Struct, frozen=True, kw_only=True):
    """Base of the tagged unions (events, messages, commands): immutable, keyword-only."""


def struct_tag(cls: type[msgspec.Struct]) -> str:
    """The tag a tagged struct class is encoded under (every tag of this project is a str)."""
    tag = cls.__struct_config__.tag
    assert isinstance(tag, str), f"{cls.__name__} has no str tag"
    return tag
