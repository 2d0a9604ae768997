"""How a WebSocket's closing handshake can race its frames, stated once for both ends.

Once one end has sent its Close frame, RFC 6455 lets it leave later pings unanswered, but
trio-websocket 0.12.2 still answers a ping that crossed our Close, still sends a ping or a
message asked for after it, and answers a ping that came in behind the peer's Close. wsproto
refuses each such frame with ``LocalProtocolError``: raised from the library's reader task (a
pong), from ``ping`` or from ``send_message``. The library exposes no connection state to ask
first, and these are the only frames it sends, so on a connection this error means "it is
closing": the connection ending, not a fault. The server must not log it as an unexpected
error, nor the client crash on it; both recognise it with :func:`crossed_close`.
"""

from __future__ import annotations

from wsproto.utilities import LocalProtocolError


def crossed_close(exc: BaseException) -> bool:
    """True when ``exc`` is wsproto refusing a frame because the connection is closing."""
    return isinstance(exc, LocalProtocolError)
