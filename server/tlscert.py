"""``conjure serve --tls-self-signed``: the server's own certificate, made once and kept.

Players cannot check a self-signed certificate against a certificate authority; they check its
fingerprint instead (the ``--pin`` the banner prints, or the one their client remembered the first
time). That only works if the certificate stays the same, so it is made on the first start, kept in
a directory (``--tls-dir``, default ``server-tls`` in the state directory) and reused on every
later start. A file there that cannot be read or parsed is an error, never replaced: replacing it
would change the fingerprint and every player's client would (rightly) refuse the server.

The certificate: EC P-256 key, SHA-256 signature, ten years, names ``localhost``, ``127.0.0.1``,
``::1``, the machine's host name and the addresses the banner prints. Files: ``cert.pem`` and
``key.pem`` (mode 0600), written to temporary files first and linked into place, so a crash never
leaves half a file under the final name and a file that is already there is never overwritten.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from conjure.protocol.fingerprint import fingerprint
from conjure.protocol.statedir import default_state_dir
from conjure.server.keyfiles import (
    KeyFileError,
    NotKeptFile,
    load_kept_key,
    read_kept,
    reason,
    write_new,
)
from conjure.server.netinfo import addresses_for

CERT_FILE = "cert.pem"
KEY_FILE = "key.pem"
TLS_DIR_NAME = "server-tls"
VALID_DAYS = 3650
_DNS_NAME = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)


class TlsCertError(Exception):
    """A certificate that cannot be used; the message is a sentence for the host."""


@dataclass(frozen=True)
class ServerCertificate:
    cert: Path
    key: Path
    fingerprint: str
    created: bool  # made by this call (False: an existing one was reused)


def default_tls_dir() -> Path:
    """``server-tls`` in the state directory (the same one the client uses)."""
    return default_state_dir() / TLS_DIR_NAME


def server_names(bind_host: str) -> list[str]:
    """What the certificate names: loopback, this machine's host name, the banner's addresses."""
    names = ["localhost", "127.0.0.1", "::1"]
    with contextlib.suppress(OSError):
        names.append(socket.gethostname())
    names += addresses_for(bind_host)
    return list(dict.fromkeys(names))


def self_signed(
    directory: Path, names: Iterable[str] = ("localhost", "127.0.0.1", "::1")
) -> ServerCertificate:
    """The certificate kept in ``directory``: the existing one, or a new one if there is none."""
    cert_path, key_path = directory / CERT_FILE, directory / KEY_FILE
    try:
        found = cert_path.exists() or key_path.exists()
    except OSError as exc:
        raise TlsCertError(f"cannot look into {directory}: {reason(exc)}") from exc
    if found:
        return _load(cert_path, key_path)
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        cert_pem, key_pem = _make(names)
        write_new(key_path, key_pem, 0o600)
        write_new(cert_path, cert_pem, 0o644)
    except FileExistsError:  # another server started at the same moment: use what it made
        return _load(cert_path, key_path)
    except OSError as exc:
        raise TlsCertError(f"cannot write a certificate in {directory}: {reason(exc)}") from exc
    return ServerCertificate(cert_path, key_path, _fingerprint_pem(cert_pem), created=True)


def fingerprint_of(cert_file: Path) -> str:
    """The fingerprint of the first certificate in a PEM file (the server's own, in a chain)."""
    try:
        data, _ = read_kept(cert_file)
    except NotKeptFile as exc:
        raise TlsCertError(str(exc)) from exc
    except OSError as exc:
        raise TlsCertError(f"cannot read {cert_file}: {reason(exc)}") from exc
    try:
        return _fingerprint_pem(data)
    except ValueError as exc:
        raise TlsCertError(f"{cert_file} holds no PEM certificate ({exc})") from exc


def check_key_file(key_file: Path) -> None:
    """TlsCertError unless ``key_file`` is a regular file of a key's size: OpenSSL opens it by
    its path, so a FIFO there hung the start (a review)."""
    try:
        read_kept(key_file)
    except NotKeptFile as exc:
        raise TlsCertError(str(exc)) from exc
    except OSError as exc:
        raise TlsCertError(f"cannot read {key_file}: {reason(exc)}") from exc


def _fingerprint_pem(data: bytes) -> str:
    cert = x509.load_pem_x509_certificates(data)[0]
    return fingerprint(cert.public_bytes(serialization.Encoding.DER))


def _load(cert_path: Path, key_path: Path) -> ServerCertificate:
    fix = (
        f"move the files in {cert_path.parent} away to make a new certificate (players will"
        " then have to pin the new fingerprint)"
    )
    for path in (cert_path, key_path):
        if not path.exists():
            other = key_path if path is cert_path else cert_path
            raise TlsCertError(f"{other} is there but {path.name} is missing; {fix}")
    try:
        cert_pem, _ = read_kept(cert_path)
    except NotKeptFile as exc:
        raise TlsCertError(f"{exc}; {fix}") from exc
    except OSError as exc:
        raise TlsCertError(
            f"cannot read the certificate in {cert_path.parent}: {reason(exc)}; {fix}"
        ) from exc
    try:
        cert = x509.load_pem_x509_certificate(cert_pem)
    except ValueError as exc:
        raise TlsCertError(f"{cert_path} is not a PEM certificate ({exc}); {fix}") from exc
    try:
        key = load_kept_key(key_path, fix)
    except KeyFileError as exc:
        raise TlsCertError(str(exc)) from exc
    except FileNotFoundError as exc:  # it was there a moment ago
        raise TlsCertError(f"{key_path} is missing; {fix}") from exc
    spki = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    try:
        mine = cert.public_key().public_bytes(*spki)
    except UnsupportedAlgorithm as exc:
        raise TlsCertError(
            f"{cert_path} holds a key of a kind this program cannot use; {fix}"
        ) from exc
    if key.public_key().public_bytes(*spki) != mine:
        raise TlsCertError(f"{key_path} is not the key of {cert_path}; {fix}")
    der = cert.public_bytes(serialization.Encoding.DER)
    return ServerCertificate(cert_path, key_path, fingerprint(der), created=False)


def _make(names: Iterable[str]) -> tuple[bytes, bytes]:
    """A new self-signed certificate and its key, both PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = []
    for name in dict.fromkeys(names):
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            if _DNS_NAME.match(name):
                sans.append(x509.DNSName(name.lower()))
    host = next((n.value for n in sans if isinstance(n, x509.DNSName)), "localhost")
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"Conjure server {host}"[:64])])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem
