"""Every form of a secret a model or a provider might hand back, computed here independently of
the scrubber (`activities.secrets`), so that a test can place each one and grep for each one."""

from __future__ import annotations

import base64
import codecs
from urllib.parse import quote


def fullwidth(text: str) -> str:
    return "".join(chr(ord(char) + 0xFEE0) if "!" <= char <= "~" else char for char in text)


def forms(secret: str) -> dict[str, str]:
    """name -> the secret in that form."""
    half = len(secret) // 2
    return {
        "exact": secret,
        "upper": secret.upper(),
        "lower": secret.lower(),
        "reversed": secret[::-1],
        "halves-space": f"{secret[:half]} {secret[half:]}",
        "halves-newline": f"{secret[:half]}\n{secret[half:]}",
        "every-char-spaced": " ".join(secret),
        "quads-dashed": "-".join(secret[i : i + 4] for i in range(0, len(secret), 4)),
        "url-encoded": "".join(f"%{ord(char):02X}" for char in secret),
        "url-encoded-twice": quote(quote(secret, safe=""), safe=""),
        "base64": base64.b64encode(secret.encode()).decode(),
        "basic-auth": base64.b64encode(f"user:{secret}".encode()).decode(),
        "base64url": base64.urlsafe_b64encode(f"x{secret}".encode()).decode().rstrip("="),
        "base32": base64.b32encode(secret.encode()).decode(),
        "hex": secret.encode().hex(),
        "hex-colons": ":".join(f"{byte:02X}" for byte in secret.encode()),
        "rot13": codecs.encode(secret, "rot13"),
        "fullwidth": fullwidth(secret),
        "zero-width": "\u200b".join(secret),
        "window-head": secret[:12],
        "window-middle": secret[7:19],
        "window-tail": secret[-12:],
    }
