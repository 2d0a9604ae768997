"""TLS without blind trust: the server's kept self-signed certificate, and clients that pin it.

Real servers on 127.0.0.1 port 0 with contexts built from certificates made by server.tlscert, and
the clients' own connection code (client.pins, client.wire, client.net, the bots).
"""

from __future__ import annotations

import argparse
import datetime
import ipaddress
import json
import os
import re
import signal
import socket
import ssl
import stat
import struct
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
import trio
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from hangguard import no_longer_than
from polling import poll_until

from conjure.client import wire
from conjure.client.bots.player import Bot, BotOptions, NamePool
from conjure.client.net import Backoff, Connection
from conjure.client.pins import (
    CertificateRefused,
    KnownServers,
    Trust,
    changed_sentence,
    no_longer_signed_sentence,
    open_tls,
    pin_mismatch_sentence,
    pin_problem,
    pinned_line,
)
from conjure.client.session import Session
from conjure.client.statefile import StateDir
from conjure.protocol import messages as m
from conjure.protocol.fingerprint import fingerprint, parse_fingerprint
from conjure.server import app as server_app
from conjure.server import tlscert

ROOT = Path(__file__).parent.parent
LISTENING = re.compile(r"^listening on wss://127\.0\.0\.1:(\d+)$")


def _context(cert: tlscert.ServerCertificate) -> ssl.SSLContext:
    return server_app.ssl_context(cert.cert, cert.key)


def _where(port: int) -> str:
    return f"127.0.0.1:{port}"


async def _hello(url: str, trust: Trust) -> m.ServerMsg:
    """Connect through the client's own code and say hello; the server's first answer."""
    async with wire.connect(url, trust=trust) as link:
        return await link.greet("test-tls")


@pytest.fixture
def certs(tmp_path: Path) -> tuple[tlscert.ServerCertificate, tlscert.ServerCertificate]:
    """Two different self-signed certificates (say, the host's old and new one)."""
    return tlscert.self_signed(tmp_path / "tls-a"), tlscert.self_signed(tmp_path / "tls-b")


@pytest.fixture
def known(tmp_path: Path) -> KnownServers:
    return KnownServers(tmp_path / "state")


# ------------------------------------------------------------------ the server's certificate


def test_the_certificate_is_kept_and_reused(tmp_path):
    where = tmp_path / "server-tls"
    first = tlscert.self_signed(where, ["localhost", "127.0.0.1", "::1", "gamebox", "192.168.1.20"])
    pem = first.cert.read_bytes()
    again = tlscert.self_signed(where, ["other-name"])
    assert first.created and not again.created
    assert again.fingerprint == first.fingerprint
    assert first.cert.read_bytes() == pem
    assert stat.S_IMODE(os.stat(first.key).st_mode) == 0o600
    assert tlscert.fingerprint_of(first.cert) == first.fingerprint

    cert = x509.load_pem_x509_certificate(pem)
    assert first.fingerprint == fingerprint(cert.public_bytes(serialization.Encoding.DER))
    assert isinstance(cert.public_key(), ec.EllipticCurvePublicKey)
    assert cert.public_key().curve.name == "secp256r1"
    assert isinstance(cert.signature_hash_algorithm, hashes.SHA256)
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(sans.get_values_for_type(x509.DNSName)) == {"localhost", "gamebox"}
    assert set(sans.get_values_for_type(x509.IPAddress)) == {
        ipaddress.ip_address(a) for a in ("127.0.0.1", "::1", "192.168.1.20")
    }


def test_server_names_are_loopback_the_host_name_and_the_banner_addresses():
    names = tlscert.server_names("10.1.2.3")
    assert names[:3] == ["localhost", "127.0.0.1", "::1"]
    assert socket.gethostname() in names
    assert "10.1.2.3" in names


@pytest.mark.parametrize("damage", ["garbled cert", "garbled key", "no key", "other key"])
def test_a_damaged_certificate_is_refused_and_left_byte_for_byte(tmp_path, damage):
    where = tmp_path / "server-tls"
    made = tlscert.self_signed(where)
    other = tlscert.self_signed(tmp_path / "other")
    if damage == "garbled cert":
        made.cert.write_bytes(b"-----BEGIN CERTIFICATE-----\nnot base64 at all\n")
    elif damage == "garbled key":
        made.key.write_bytes(b"\x00\x01 garbage")
    elif damage == "no key":
        made.key.unlink()
    else:
        made.key.write_bytes(other.key.read_bytes())
    before = {p.name: p.read_bytes() for p in where.iterdir()}
    with pytest.raises(tlscert.TlsCertError) as caught:
        tlscert.self_signed(where)
    sentence = str(caught.value)
    assert str(where) in sentence
    assert "move the files" in sentence
    assert {p.name: p.read_bytes() for p in where.iterdir()} == before


def test_a_certificate_path_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    made = tlscert.self_signed(tmp_path / "server-tls")
    made.cert.unlink()
    os.mkfifo(made.cert)
    with no_longer_than(5, "loading the certificate"):
        with pytest.raises(tlscert.TlsCertError, match="is not a regular file"):
            tlscert.self_signed(tmp_path / "server-tls")
        with pytest.raises(tlscert.TlsCertError, match="is not a regular file"):
            tlscert.fingerprint_of(made.cert)


def test_a_key_other_users_can_read_is_refused(tmp_path):
    made = tlscert.self_signed(tmp_path / "server-tls")
    os.chmod(made.key, 0o644)
    with pytest.raises(tlscert.TlsCertError, match="chmod 600"):
        tlscert.self_signed(tmp_path / "server-tls")


def test_self_signed_and_a_given_certificate_exclude_each_other(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    server_app.add_arguments(parser)
    args = parser.parse_args(
        [
            "--tls-self-signed",
            "--tls-cert",
            "c.pem",
            "--tls-key",
            "k.pem",
            "--replays",
            str(tmp_path),
        ]
    )
    assert server_app.run(args) == 2
    assert "exclude each other" in capsys.readouterr().err
    garbled = tmp_path / "garbled"
    garbled.mkdir()
    (garbled / tlscert.CERT_FILE).write_bytes(b"junk")
    (garbled / tlscert.KEY_FILE).write_bytes(b"junk")
    args = parser.parse_args(["--tls-self-signed", "--tls-dir", str(garbled)])
    assert server_app.run(args) == 2
    assert "is not a PEM certificate" in capsys.readouterr().err
    assert (garbled / tlscert.CERT_FILE).read_bytes() == b"junk"


async def _read_until_listening(stream: trio.abc.ReceiveStream, lines: list[str]) -> int:
    pending = b""
    with trio.fail_after(30):
        while True:
            chunk = await stream.receive_some(4096)
            if not chunk:
                raise AssertionError("the server exited early:\n" + "\n".join(lines))
            pending += chunk
            *done, pending = pending.split(b"\n")
            for raw in done:
                lines.append(raw.decode())
                found = LISTENING.match(lines[-1])
                if found:
                    return int(found.group(1))


@pytest.mark.slow
async def test_serve_prints_the_fingerprint_in_its_join_lines(tmp_path, known):
    tls_dir = tmp_path / "server-tls"
    cmd = [sys.executable, "-m", "conjure.client.cli", "serve", "--tls-self-signed", "--tls-dir"]
    cmd += [str(tls_dir), "--host", "127.0.0.1", "--port", "0", "--replays", str(tmp_path / "r")]
    proc = await trio.lowlevel.open_process(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT
    )
    lines: list[str] = []
    try:
        port = await _read_until_listening(proc.stdout, lines)
        pin = tlscert.self_signed(tls_dir).fingerprint  # what it made (and keeps)
        url = f"wss://127.0.0.1:{port}"
        assert f"certificate fingerprint {pin}" in lines
        assert f"  conjure play {url} --pin {pin} --name YOU --create" in lines
        assert f"  conjure play {url} --pin {pin} --name YOU --room CODE" in lines
        assert isinstance(await _hello(url, Trust(pin=pin, known=known)), m.Welcome)
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            with trio.move_on_after(10):
                await proc.wait()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await proc.stdout.aclose()


# ------------------------------------------------------------------ the clients' checks


async def test_the_right_pin_connects_and_is_remembered(start_server, certs, known):
    server = await start_server(ssl_context=_context(certs[0]))
    told: list[str] = []
    pin = certs[0].fingerprint.lower().replace("sha256:", "")  # typed sloppily: still the pin
    trust = Trust(pin=pin, known=known, tell=told.append)
    welcome = await _hello(server.url, trust)
    assert isinstance(welcome, m.Welcome)
    assert trust.accepted == certs[0].fingerprint  # what a share line carries as --pin
    assert known.lookup(_where(server.port)).pin == certs[0].fingerprint
    assert told == [pinned_line(_where(server.port), certs[0].fingerprint)]
    assert stat.S_IMODE(os.stat(known.path).st_mode) == 0o600
    # The next connection checks the remembered pin (and has nothing new to say).
    assert isinstance(await _hello(server.url, Trust(known=known, tell=told.append)), m.Welcome)
    assert len(told) == 1


async def test_a_wrong_pin_is_refused(start_server, certs, known, said):
    server = await start_server(ssl_context=_context(certs[0]))
    wrong = certs[1].fingerprint
    with pytest.raises(CertificateRefused) as caught:
        await _hello(server.url, Trust(pin=wrong, known=known))
    assert str(caught.value) == pin_mismatch_sentence(
        _where(server.port), wrong, certs[0].fingerprint
    )
    assert known.lookup(_where(server.port)) is None
    assert not known.path.exists()
    assert not server.connections
    assert not any("unexpected" in line for line in said)


async def test_nothing_is_sent_to_a_server_that_fails_the_check(nursery, certs, known):
    """A bare TLS server records what arrives after its handshake: not one byte, HTTP included."""
    arrived: list[bytes] = []

    async def record(stream: trio.SSLStream) -> None:
        data = b""
        try:
            await stream.do_handshake()
            while chunk := await stream.receive_some():
                data += chunk
        except trio.BrokenResourceError:
            pass
        finally:
            arrived.append(data)
            await trio.aclose_forcefully(stream)

    listeners = await nursery.start(
        partial(trio.serve_ssl_over_tcp, record, 0, _context(certs[0]), host="127.0.0.1")
    )
    port = listeners[0].transport_listener.socket.getsockname()[1]
    with pytest.raises(CertificateRefused):
        await _hello(f"wss://127.0.0.1:{port}", Trust(pin=certs[1].fingerprint, known=known))
    # The probe does see what a trusted connection sends.
    tls = await open_tls("127.0.0.1", port, Trust(pin=certs[0].fingerprint, known=known))
    await tls.send_all(b"after the check")
    await tls.aclose()
    with trio.fail_after(10):
        await poll_until(lambda: len(arrived) >= 2)
    assert sorted(arrived) == [b"", b"after the check"]


async def test_first_use_pins_and_a_changed_certificate_is_refused(start_server, certs, known):
    ctx = _context(certs[0])
    server = await start_server(ssl_context=ctx)
    where = _where(server.port)
    told: list[str] = []
    first = Trust(known=known, tell=told.append)
    assert isinstance(await _hello(server.url, first), m.Welcome)
    assert told == [pinned_line(where, certs[0].fingerprint)]
    assert first.accepted == certs[0].fingerprint
    assert known.lookup(where).pin == certs[0].fingerprint
    stored = known.path.read_bytes()

    ctx.load_cert_chain(certs[1].cert, certs[1].key)  # same host:port, another certificate
    with pytest.raises(CertificateRefused) as caught:
        await _hello(server.url, Trust(known=known, tell=told.append))
    assert str(caught.value) == changed_sentence(where, certs[0].fingerprint, certs[1].fingerprint)
    assert known.path.read_bytes() == stored
    assert len(told) == 1
    # The remedy the sentence gives: the new pin from the host's screen.
    assert isinstance(
        await _hello(server.url, Trust(pin=certs[1].fingerprint, known=known)), m.Welcome
    )
    assert known.lookup(where).pin == certs[1].fingerprint


async def test_the_player_client_stops_on_a_changed_certificate(start_server, certs, tmp_path):
    server = await start_server(ssl_context=_context(certs[1]))
    store = StateDir(tmp_path / "state")
    KnownServers(store.path).remember(_where(server.port), certs[0].fingerprint)
    session = Session(
        server=server.url, store=store, send=lambda msg: None, name="Ann", create=True
    )
    _send, outgoing = trio.open_memory_channel[m.ClientMsg](8)
    conn = Connection(
        session,
        server.url,
        outgoing,
        lambda: None,
        trust=Trust(known=KnownServers(store.path)),
        backoff=Backoff(first=0.01, cap=0.01),
    )
    with trio.fail_after(10):
        await conn.run()  # returns: no endless retrying
    sentence = changed_sentence(_where(server.port), certs[0].fingerprint, certs[1].fingerprint)
    assert conn.refused == sentence
    assert session.ended == sentence
    assert session.banner == f"disconnected: {sentence}"
    assert [line.text for line in session.feed][-1] == sentence
    assert conn.connections == 0


async def test_a_bot_stops_on_a_wrong_pin(start_server, certs, tmp_path):
    server = await start_server(ssl_context=_context(certs[0]))
    lines: list[str] = []
    opts = BotOptions(
        url=server.url,
        room="ABCD",
        delay=(0, 0),
        store=StateDir(tmp_path / "state"),
        log=lines.append,
        pin=certs[1].fingerprint,
    )
    bot = Bot(opts, NamePool())
    with trio.fail_after(10):
        assert await bot.run() == 1
    assert bot.status is not None and bot.status.startswith("refused the server: ")
    assert "is not the one given with --pin" in bot.status
    assert bot.connections == 0


def _ca_and_leaf(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A test certificate authority and a server certificate for 127.0.0.1 it signed."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = tmp_path / "ca.pem", tmp_path / "leaf.pem", tmp_path / "leaf.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


async def test_an_authority_signed_certificate_is_accepted_as_usual(
    start_server, certs, known, tmp_path, monkeypatch
):
    ca, leaf, key = _ca_and_leaf(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))  # the "system" authorities, for this test
    ctx = server_app.ssl_context(leaf, key)
    server = await start_server(ssl_context=ctx)
    where = _where(server.port)
    told: list[str] = []
    assert isinstance(await _hello(server.url, Trust(known=known, tell=told.append)), m.Welcome)
    assert told == []  # nothing to pin: the authority vouched for it
    assert known.lookup(where).pin is None
    # Later a certificate no authority vouches for: refused, not trusted on first use.
    ctx.load_cert_chain(certs[0].cert, certs[0].key)
    with pytest.raises(CertificateRefused) as caught:
        await _hello(server.url, Trust(known=known, tell=told.append))
    assert str(caught.value) == no_longer_signed_sentence(where, certs[0].fingerprint)
    assert told == []


async def test_a_damaged_known_servers_file_is_refused_not_replaced(start_server, certs, known):
    server = await start_server(ssl_context=_context(certs[0]))
    known.path.parent.mkdir(parents=True)
    known.path.write_text('{"version": 1, "servers": {"x:1": {"pin": "nope"}}}')
    with pytest.raises(CertificateRefused, match="is damaged"):
        await _hello(server.url, Trust(known=known))
    assert json.loads(known.path.read_text())["servers"] == {"x:1": {"pin": "nope"}}


async def test_aborted_handshakes_do_not_end_the_server(start_server, certs, known, said):
    server = await start_server(ssl_context=_context(certs[0]))
    # 1. TCP connect, then RST.
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_STREAM)
    await sock.connect(("127.0.0.1", server.port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()
    # 2. Plain HTTP to the TLS port.
    stream = await trio.open_tcp_stream("127.0.0.1", server.port)
    await stream.send_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    await stream.aclose()
    # 3. A client that rejects the certificate during the handshake (no authority signed it).
    with pytest.raises(trio.BrokenResourceError):
        await _verifying_handshake(server.port)
    # 4. A client that finishes the handshake and then rejects the certificate (wrong pin).
    with pytest.raises(CertificateRefused):
        await _hello(server.url, Trust(pin=certs[1].fingerprint, known=known))
    # The server still serves.
    welcome = await _hello(server.url, Trust(pin=certs[0].fingerprint, known=known))
    assert isinstance(welcome, m.Welcome)
    assert not any("unexpected" in line for line in said)


async def _verifying_handshake(port: int) -> None:
    tls = await trio.open_ssl_over_tcp_stream(
        "127.0.0.1", port, ssl_context=ssl.create_default_context()
    )
    try:
        await tls.do_handshake()
    finally:
        await trio.aclose_forcefully(tls)


# ------------------------------------------------------------------ the text forms


def test_fingerprints_have_one_text_form():
    fp = fingerprint(b"some DER bytes")
    assert re.fullmatch(r"sha256:[0-9A-F]{64}", fp)
    colons = ":".join(fp[7:][i : i + 2] for i in range(0, 64, 2))
    for typed in (fp, fp.lower(), fp[7:], f"SHA256:{colons}", f"  {fp}  "):
        assert parse_fingerprint(typed) == fp
    for bad in ("sha256:", "sha256:" + "0" * 63, "md5:" + "0" * 64, "sha256:" + "G" * 64):
        with pytest.raises(ValueError, match="not a certificate fingerprint"):
            parse_fingerprint(bad)


def test_pin_goes_with_wss_only():
    fp = fingerprint(b"x")
    assert pin_problem("wss://h:1", fp) is None
    assert pin_problem("wss://h:1", None) is None
    assert "not wss://" in (pin_problem("ws://h:1", fp) or "")
    assert "not a certificate fingerprint" in (pin_problem("wss://h:1", "AB12") or "")


def test_serving_doc_shows_the_sentences_the_client_says():
    doc = (ROOT / "docs" / "SERVING.md").read_text()
    section = doc[doc.index("## TLS for remote players") :]
    block = section[section.index("**How a changed certificate looks") :]
    shown = " ".join(block.split("```")[1].split())
    assert shown == changed_sentence("192.168.1.20:8765", "sha256:3F1C…9A", "sha256:77D0…E1")
    assert f"`{pinned_line('192.168.1.20:8765', 'sha256:3F1C…9A')}`" in " ".join(section.split())


def test_play_refuses_a_pin_that_cannot_apply(capsys):
    from conjure.client.app import Options, run_client

    assert run_client(Options(url="ws://127.0.0.1:1", create=True, pin=fingerprint(b"x"))) == 2
    assert "not wss://" in capsys.readouterr().err
    assert run_client(Options(url="wss://127.0.0.1:1", create=True, pin="AB12")) == 2
    assert "not a certificate fingerprint" in capsys.readouterr().err


def test_a_tls_key_path_that_is_a_fifo_is_refused_not_waited_on(tmp_path, monkeypatch, capsys):
    """Found by review: with ``--tls-cert``/``--tls-key`` the key is opened by OpenSSL, by its
    path, so a FIFO there hung the start as one at the receipt key's path did."""
    made = tlscert.self_signed(tmp_path / "tls")
    fifo = tmp_path / "key.pem"
    os.mkfifo(fifo, 0o600)
    monkeypatch.setenv("CONJURE_STATE_DIR", str(tmp_path / "state"))
    parser = argparse.ArgumentParser()
    server_app.add_arguments(parser)
    args = parser.parse_args(
        [
            "--tls-cert",
            str(made.cert),
            "--tls-key",
            str(fifo),
            "--replays",
            str(tmp_path / "replays"),
            "--receipt-key",
            str(tmp_path / "receipt-key.pem"),
            "--port",
            "0",
        ]
    )
    with no_longer_than(5, "loading the TLS key"):
        assert server_app.run(args) == 2
    assert "not a regular file" in capsys.readouterr().err


async def test_closed_tls_connections_do_not_wait_for_the_full_collection(
    start_server, certs, monkeypatch, nursery
):
    """Found by review: each trio.SSLStream is a reference cycle, older than the clock's young
    collections by the time it closes, so 38,000 connections opened and closed grew a server
    to 590 MB until the full collection every ten minutes, which then stopped every room for
    600 ms. A middle collection now follows every so many closed TLS connections."""
    import gc

    from conjure.server import gctuning

    monkeypatch.setattr(gctuning, "TLS_CLOSED_COLLECT", 10)
    server = await start_server(ssl_context=_context(certs[0]))
    client = ssl.create_default_context()
    client.check_hostname = False
    client.verify_mode = ssl.CERT_NONE

    def server_streams() -> int:
        return sum(
            1
            for o in gc.get_objects()
            if isinstance(o, trio.SSLStream) and getattr(o, "server_side", False)
        )

    was = gc.isenabled()
    gc.collect()
    gc.disable()  # only the server's own collections run, as under its thresholds
    try:
        nursery.start_soon(gctuning.collect_young, 0.01, 3600.0)
        for _ in range(40):
            tcp = await trio.open_tcp_stream("127.0.0.1", server.port)
            tls = trio.SSLStream(tcp, client, server_hostname="127.0.0.1")
            await tls.do_handshake()
            await trio.sleep(0.03)  # older than a young collection, as any real connection
            await trio.aclose_forcefully(tls)
        await trio.sleep(0.2)
        assert server_streams() <= 12  # at most one batch, not all 40
    finally:
        if was:
            gc.enable()
