"""Patches between two views: a JSON Patch (RFC 6902) of ``add``, ``remove`` and ``replace``.

A client that says ``"features": ["patches"]`` in its ``hello`` gets one full view, then only
what changed for it (docs/PROTOCOL.md, "Patches"). The server makes a patch with :func:`diff`
(``server/patching.py``); every client applies it with :func:`apply` (``client/wire.py``, the
benchmark's players). Both sides work on the view as plain JSON data (dicts, lists, strings,
numbers), exactly what decoding the full view's JSON gives.

:func:`diff` keeps patches small where views change: a dict is compared key by key; a list of
the same length element by element; a list that grew at its end gets its new elements added;
anything else is replaced whole. The ops are standard, so any RFC 6902 library applies them.
"""

from __future__ import annotations

from typing import Any

#: The word a client puts in ``hello.features`` (and the server in ``welcome.features``).
FEATURE = "patches"

Op = dict[str, Any]


class PatchError(ValueError):
    """A patch does not apply to this document (a path that is not there, an unknown op)."""


def _token(key: str) -> str:
    if "~" in key or "/" in key:
        return key.replace("~", "~0").replace("/", "~1")
    return key


def _untoken(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _index(token: str) -> int:
    """An array index as RFC 6901 writes one: digits, no sign, no leading zero."""
    if not token.isdigit() or (len(token) > 1 and token[0] == "0") or not token.isascii():
        raise PatchError(f"not an array index: {token!r}")
    return int(token)


def diff(old: Any, new: Any) -> list[Op]:
    """The ops that turn ``old`` into ``new`` (neither is changed; ``new``'s values are shared
    with the ops, so treat both as read-only)."""
    ops: list[Op] = []
    if old != new:
        _diff(old, new, "", ops)
    return ops


def _diff(a: Any, b: Any, path: str, ops: list[Op]) -> None:
    # Called only when a != b.
    if type(a) is dict and type(b) is dict:
        for k in a:
            if k not in b:
                ops.append({"op": "remove", "path": f"{path}/{_token(k)}"})
        for k, bv in b.items():
            if k not in a:
                ops.append({"op": "add", "path": f"{path}/{_token(k)}", "value": bv})
            else:
                av = a[k]
                if av != bv:
                    _diff(av, bv, f"{path}/{_token(k)}", ops)
        return
    if type(a) is list and type(b) is list:
        n = len(a)
        if n == len(b):
            for i in range(n):
                if a[i] != b[i]:
                    _diff(a[i], b[i], f"{path}/{i}", ops)
            return
        if n < len(b) and a == b[:n]:
            for v in b[n:]:
                ops.append({"op": "add", "path": f"{path}/-", "value": v})
            return
    ops.append({"op": "replace", "path": path, "value": b})


def apply(doc: Any, ops: list[Op]) -> Any:
    """``doc`` with ``ops`` applied, in order: changed in place where it can be (the root
    replaced is returned), so pass a document of your own. Raises :class:`PatchError`."""
    for op in ops:
        try:
            kind, path = op["op"], op["path"]
        except (KeyError, TypeError):
            raise PatchError(f"not a patch op: {op!r}") from None
        if kind not in ("add", "remove", "replace"):
            raise PatchError(f"unknown op {kind!r}")
        if path == "":
            if kind == "remove":
                raise PatchError("cannot remove the whole document")
            doc = op.get("value")
            continue
        if not isinstance(path, str) or not path.startswith("/"):
            raise PatchError(f"not a JSON pointer: {path!r}")
        parents = path[1:].split("/")
        if "~" in path:  # only an escaped token changes when unescaped (RFC 6901)
            parents = [_untoken(t) for t in parents]
        last = parents.pop()
        target = doc
        try:
            for t in parents:
                target = target[_index(t)] if type(target) is list else target[t]
            if type(target) is list:
                if kind == "add":
                    if last == "-":
                        target.append(op["value"])
                    else:
                        i = _index(last)
                        if i > len(target):
                            raise IndexError(i)
                        target.insert(i, op["value"])
                elif kind == "replace":
                    target[_index(last)] = op["value"]
                else:
                    del target[_index(last)]
            elif type(target) is dict:
                if kind == "add":
                    target[last] = op["value"]
                elif kind == "replace":
                    if last not in target:
                        raise KeyError(last)
                    target[last] = op["value"]
                else:
                    del target[last]
            else:
                raise TypeError(f"{path}: not a container")
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            raise PatchError(f"{kind} {path}: {exc}") from None
    return doc
