"""Where a user's Conjure state lives, and the receipt file names in it.

Stated here, below both sides, because the client writes this directory (seat tokens, receipts,
pins: ``client/statefile.py``) and the server's tools read it (``conjure replay`` finds the
receipts there; ``conjure serve --tls-self-signed`` keeps its certificate there).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

STATE_DIR_ENV = "CONJURE_STATE_DIR"
RECEIPTS_DIR = "receipts"
#: The client's private file: seat tokens, committed summoning words, and each deal's commitment
#: as shown with the client's own share of it (``conjure replay`` reads the last two).
SECRETS_FILE = "secrets.json"
#: Its sections, each a JSON object: ``seats``, ``summons`` and ``deals`` (``room|commitment`` ->
#: server, room, commitment, share, saved_at).
SECRET_SECTIONS = ("seats", "summons", "deals")
_SAFE_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")  # fullmatch: a "$" would take a final newline


def default_state_dir() -> Path:
    """``$CONJURE_STATE_DIR`` if set, else the platform's user state directory for "conjure"."""
    env = os.environ.get(STATE_DIR_ENV)
    if env:
        return Path(env)
    import platformdirs  # only when needed: most commands name their directory or never use it

    return Path(platformdirs.user_state_dir("conjure"))


def receipt_file_name(game_id: str) -> str:
    """The file under ``receipts/`` holding a game's receipt: the id itself when it is a safe
    file name, else its SHA-256 (so no game id can name a path outside the folder)."""
    if _SAFE_NAME.fullmatch(game_id) and game_id not in (".", ".."):
        return f"{game_id}.json"
    return hashlib.sha256(game_id.encode()).hexdigest() + ".json"
