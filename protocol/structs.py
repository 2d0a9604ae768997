"""The frozen, keyword-only struct base that type checkers can read.

msgspec hands ``frozen`` and ``kw_only`` down to subclasses at runtime, but PEP 681 checkers only
know what ``dataclass_transform`` tells them: without this base every subclass of a frozen struct
is reported as "a non-frozen class cannot inherit from a frozen one", and checkers miss writes to
fields and positional construction.
"""

from __future__ import annotations

from typing import Annotated, dataclass_transform

import msgspec

#: The last second of the year 9999 (UTC): a calendar date, and a server's clock, stop there.
MAX_TIME = 253402300799.0
#: A time a clock gives, in seconds since 1970. A log holding another was written by no server
#: of this program, and its report could show it as no date (found by review: such times made
#: ``conjure replay`` stop with a traceback); decoding refuses it instead.
Time = Annotated[float, msgspec.Meta(ge=0.0, le=MAX_TIME)]


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(msgspec.field,))
class FrozenStruct(msgspec.Struct, frozen=True, kw_only=True):
    """Base of the tagged unions (events, messages, commands): immutable, keyword-only."""


def struct_tag(cls: type[msgspec.Struct]) -> str:
    """The tag a tagged struct class is encoded under (every tag of this project is a str)."""
    tag = cls.__struct_config__.tag
    assert isinstance(tag, str), f"{cls.__name__} has no str tag"
    return tag
