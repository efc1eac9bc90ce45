"""Blank out token-looking text before it reaches an error message.

Plugin stderr is the most useful thing we can show a user whose plugin failed, but a
plugin may echo what it read (a token, a kubeconfig). We keep the words and drop values
that look like credentials.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

REDACTED = "<redacted>"

_PATTERNS: tuple[re.Pattern[str], ...] = (
    # JWTs (service account tokens, OIDC id tokens).
    re.compile(r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"),
    # "Bearer <value>" as in an Authorization header.
    re.compile(r"(?i)(bearer\s+)[^\s\"',;]+"),
    # key: value / key=value / "key": "value" where the key names a secret.
    re.compile(
        r"(?i)((?:token|password|passwd|secret|client-key-data|client-key|"
        r"clientKeyData|client-certificate-data|clientCertificateData)"
        r"[\"']?\s*[:=]\s*[\"']?)[^\s\"',;}]+"
    ),
    # PEM private keys.
    re.compile(
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S
    ),
    # Long hex strings (static tokens, API keys).
    re.compile(r"\b[0-9a-fA-F]{32,}\b"),
)


_OPAQUE_RUN = re.compile(r"[A-Za-z0-9+/_=-]{32,}")


def _opaque(match: re.Match[str]) -> str:
    """Long base64-ish runs mixing digits and both cases look like tokens, not words."""
    run = match.group(0)
    classes = (str.isdigit, str.islower, str.isupper)
    return REDACTED if all(any(test(c) for c in run) for test in classes) else run


def redact(text: str, known_secrets: Iterable[str] = ()) -> str:
    """Return `text` with known secrets and token-looking values replaced."""
    for secret in known_secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    for pattern in _PATTERNS:
        if pattern.groups:
            text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
        else:
            text = pattern.sub(REDACTED, text)
    return _OPAQUE_RUN.sub(_opaque, text)
