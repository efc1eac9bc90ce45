"""The credential an access provider's plugin issues: a bearer token, a client
certificate and key, or both, as client-go accepts them from an ExecCredential.

It lives only in memory. TLS libraries (`ssl`, and through it the kubernetes client)
load a client certificate only from files, so `client_cert_files` writes them to a
private temp dir for as long as a client needs them and removes them after.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PluginCredential:
    """What the plugin returned; secret fields are kept out of repr()."""

    token: str | None = field(default=None, repr=False)
    client_certificate_data: str | None = field(default=None, repr=False)
    client_key_data: str | None = field(default=None, repr=False)
    expiration_timestamp: str | None = None

    @property
    def kind(self) -> str:
        """What authenticates us, in words for messages ("token" wins, as in client-go)."""
        return "token" if self.token else "client certificate"

    def secrets(self) -> list[str]:
        """The values no message may quote, for redaction."""
        values = (self.token, self.client_certificate_data, self.client_key_data)
        return [value for value in values if value]


@contextlib.contextmanager
def client_cert_files(credential: PluginCredential) -> Iterator[tuple[str, str] | None]:
    """(cert path, key path) in a 0700 temp dir, files 0600, removed on exit; None
    when the credential has no client certificate."""
    if not credential.client_certificate_data or not credential.client_key_data:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="knative-fleet-") as tmp:  # mode 0700
        paths = (os.path.join(tmp, "client.crt"), os.path.join(tmp, "client.key"))
        secrets = (credential.client_certificate_data, credential.client_key_data)
        for path, data in zip(paths, secrets, strict=True):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(data)
        yield paths
