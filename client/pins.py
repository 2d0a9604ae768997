"""Which wss:// servers this client trusts, and the TLS stream that checks before it speaks.

A friend's server usually has a certificate of its own (``conjure serve --tls-self-signed``) that no
certificate authority vouches for, so the client does what ssh does: it pins the certificate's
fingerprint (:mod:`protocol.fingerprint`) per ``HOST:PORT``. The TLS handshake is done here,
explicitly, and the certificate judged *before* the WebSocket upgrade: nothing, not even the HTTP
request, goes to a server that fails the check. The rules, in order:

1. ``--pin sha256:...`` given: the certificate must have that fingerprint (then it is remembered).
2. A fingerprint remembered for ``HOST:PORT``: the certificate must have it; a changed one is
   refused (:class:`CertificateRefused`, never retried).
3. Neither: a certificate that verifies against the system's authorities for the host name is
   accepted as any TLS client would (and ``HOST:PORT`` remembered as such, so a later certificate
   no authority vouches for is refused, not silently trusted); any other is trusted on first use:
   accepted, its fingerprint remembered, and the user told in one line.

``known_servers.json`` in the state directory (:mod:`client.statefile`; mode 0600, replaced
atomically, read-modify-write under ``flock`` on ``known_servers.lock``)::

    {"version": 1, "servers": {
        "192.168.1.20:8765": {"pin": "sha256:3F1C...9A", "saved_at": 1767225600.0},
        "conjure.example.org:443": {"ca": true, "saved_at": 1767225600.0}}}
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from conjure.client.statefile import default_state_dir, write_private
from conjure.protocol.errors import first_of
from conjure.protocol.fingerprint import fingerprint, parse_fingerprint, same_fingerprint

KNOWN_SERVERS_FILE = "known_servers.json"
VERSION = 1


class CertificateRefused(ssl.SSLError):
    """The server's certificate is not one this client trusts; the message says why and what to
    do. Retrying cannot help, so reconnect loops stop on it."""

    def __str__(self) -> str:  # ssl.SSLError would show the args tuple
        return str(self.args[0]) if self.args else "the server's certificate was refused"


def refused(exc: BaseException) -> CertificateRefused | None:
    """The CertificateRefused in ``exc`` (or in an exception group), if there is one."""
    return first_of(exc, CertificateRefused)


def changed_sentence(where: str, pinned: str, now: str) -> str:
    return (
        f"The certificate of {where} changed since you first connected (pinned {pinned},"
        f" now {now}). If the host made a new certificate, run again with --pin <new> (shown on"
        " the host's screen); otherwise someone may be intercepting the connection."
    )


def pin_mismatch_sentence(where: str, pin: str, now: str) -> str:
    return (
        f"The certificate of {where} is not the one given with --pin (expected {pin}, got"
        f" {now}). Check the fingerprint on the host's screen; if it is the one you typed,"
        " someone may be intercepting the connection."
    )


def no_longer_signed_sentence(where: str, now: str) -> str:
    return (
        f"The certificate of {where} is no longer signed by an authority this system trusts,"
        f" as it was when you first connected (now {now}). If the host now uses a certificate of"
        " its own, run again with --pin <fingerprint> (shown on the host's screen); otherwise"
        " someone may be intercepting the connection."
    )


def pinned_line(where: str, pin: str) -> str:
    return f"pinned the certificate of {where}: {pin}"


def server_key(host: str, port: int) -> str:
    """``HOST:PORT`` as the pins are kept (IPv6 literals in brackets)."""
    host = host.lower()
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def pin_problem(url: str, pin: str | None) -> str | None:
    """What is wrong with ``--pin`` for this URL, if anything (for the command lines)."""
    if pin is None:
        return None
    if not url.startswith("wss://"):
        return "--pin checks a wss:// server's certificate; this address is not wss://"
    try:
        parse_fingerprint(pin)
    except ValueError as exc:
        return str(exc)
    return None


# ------------------------------------------------------------------ the file


@dataclass(frozen=True)
class Known:
    """What is remembered of one server: its fingerprint, or None for "signed by an authority"."""

    pin: str | None


class KnownServers:
    """``known_servers.json`` in one state directory (see the module docstring)."""

    def __init__(self, state_dir: Path | str | None = None) -> None:
        base = Path(state_dir) if state_dir is not None else default_state_dir()
        self.path = base / KNOWN_SERVERS_FILE

    def lookup(self, where: str) -> Known | None:
        entry = self._read().get(where)
        if entry is None:
            return None
        if entry.get("ca") is True:
            return Known(None)
        return Known(entry["pin"])

    def remember(self, where: str, pin: str | None) -> None:
        """Keep ``pin`` (None: the certificate was signed by an authority) for ``where``."""
        entry: dict[str, Any] = {"ca": True} if pin is None else {"pin": pin}
        entry["saved_at"] = time.time()
        with self._locked():
            servers = self._read()
            servers[where] = entry
            data = {"version": VERSION, "servers": servers}
            write_private(self.path, json.dumps(data, indent=1, sort_keys=True).encode() + b"\n")

    @contextlib.contextmanager
    def _locked(self):
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _read(self) -> dict[str, dict[str, Any]]:
        """The servers in the file ({} if there is none); a damaged file is refused, not replaced:
        starting afresh would silently trust every server anew."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise self._damaged(exc.strerror or str(exc)) from exc
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise self._damaged(f"not JSON: {exc}") from exc
        servers = data.get("servers") if isinstance(data, dict) else None
        if not isinstance(servers, dict):
            raise self._damaged('no "servers" object')
        for where, entry in servers.items():
            ok = isinstance(entry, dict) and (
                entry.get("ca") is True or _is_fingerprint(entry.get("pin"))
            )
            if not ok:
                raise self._damaged(f"the entry for {where} is neither a pin nor a CA mark")
        return servers

    def _damaged(self, why: str) -> CertificateRefused:
        return CertificateRefused(
            f"Cannot check the server's certificate: {self.path} is damaged ({why}). Fix it, or"
            " move it away (every server is then trusted anew on first connection)."
        )


def _is_fingerprint(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        return parse_fingerprint(value) == value
    except ValueError:
        return False


# ------------------------------------------------------------------ the connection


def _nobody_tells(line: str) -> None:
    pass


@dataclass
class Trust:
    """How one client judges wss:// certificates: its ``--pin``, its known servers, and where the
    one line about a newly pinned certificate goes."""

    pin: str | None = None  # as typed: any form parse_fingerprint accepts
    known: KnownServers = field(default_factory=KnownServers)
    tell: Callable[[str], None] = _nobody_tells
    #: The fingerprint of the certificate last accepted by pinning (None: an authority signed
    #: it): what a join line for friends carries as ``--pin`` (client.screen, client.app).
    accepted: str | None = None

    def __post_init__(self) -> None:
        if self.pin is not None:
            self.pin = parse_fingerprint(self.pin)


def _pinning_context() -> ssl.SSLContext:
    """No authority check: the fingerprint comparison that follows is the check."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False  # must come before verify_mode = CERT_NONE
    ctx.verify_mode = ssl.CERT_NONE
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    return ctx


async def tls_handshake(host: str, port: int, ctx: ssl.SSLContext) -> trio.SSLStream:
    """A TCP connection with the TLS handshake done (nothing else sent yet); closed on failure."""
    tcp = await trio.open_tcp_stream(host, port)
    tls = trio.SSLStream(tcp, ctx, server_hostname=host, https_compatible=True)
    try:
        await tls.do_handshake()
    except BaseException:
        await trio.aclose_forcefully(tls)
        raise
    return tls


def _peer_fingerprint(tls: trio.SSLStream) -> str:
    der = tls.getpeercert(binary_form=True)
    if not der:
        raise CertificateRefused("The server sent no certificate.")
    return fingerprint(der)


def _unverifiable(exc: trio.BrokenResourceError) -> bool:
    return isinstance(exc.__cause__, ssl.SSLCertVerificationError)


async def open_tls(host: str, port: int, trust: Trust) -> trio.SSLStream:
    """A TLS stream to ``host:port`` whose certificate passed the rules of the module docstring;
    CertificateRefused (with the TCP connection already closed) if it did not."""
    where = server_key(host, port)
    known = await trio.to_thread.run_sync(trust.known.lookup, where)
    expected = trust.pin or (known.pin if known is not None else None)
    if expected is not None:
        tls = await tls_handshake(host, port, _pinning_context())
        try:
            now = _peer_fingerprint(tls)
            if not same_fingerprint(now, expected):
                if trust.pin is not None:
                    raise CertificateRefused(pin_mismatch_sentence(where, expected, now))
                raise CertificateRefused(changed_sentence(where, expected, now))
            if known is None or known.pin is None or not same_fingerprint(known.pin, now):
                await trio.to_thread.run_sync(trust.known.remember, where, now)
                trust.tell(pinned_line(where, now))
        except BaseException:
            await trio.aclose_forcefully(tls)
            raise
        trust.accepted = now
        return tls
    try:
        tls = await tls_handshake(host, port, ssl.create_default_context())
    except trio.BrokenResourceError as exc:
        if not _unverifiable(exc):
            raise
    else:
        if known is None:
            await trio.to_thread.run_sync(trust.known.remember, where, None)
        trust.accepted = None
        return tls
    # No authority vouches for it: trust on first use (unless one vouched for it before).
    tls = await tls_handshake(host, port, _pinning_context())
    try:
        now = _peer_fingerprint(tls)
        if known is not None:
            raise CertificateRefused(no_longer_signed_sentence(where, now))
        await trio.to_thread.run_sync(trust.known.remember, where, now)
        trust.tell(pinned_line(where, now))
    except BaseException:
        await trio.aclose_forcefully(tls)
        raise
    trust.accepted = now
    return tls
