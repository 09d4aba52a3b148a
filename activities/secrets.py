"""The one scrubber of the worker's secrets: what a model or a provider hands back carries none.

Every secret the worker holds (`Settings.secrets()`: the model's, the verifier's and the search
provider's keys, Temporal's API key, the database passwords) is looked for in every form that can
be computed from the secret itself, before model output is returned to the workflow (history),
stored in the ledger, sent to a search provider or a fetcher, or repeated in an error:

- the text is first folded: JSON escapes decoded, Unicode NFKC (fullwidth letters become plain
  ones), invisible format characters dropped (zero-width spaces, joiners), URL-decoded twice,
  letter case folded;
- then it is read twice: as folded, and with every separator and whitespace taken out (a key split
  by spaces, dashes, colons or line breaks);
- a secret is found when either reading holds any WINDOW consecutive characters of one of its
  forms: the secret, reversed, ROT13, hex, base64 and base32 (each of their alignments), or the
  whole secret with any separators between its characters.

A secret shorter than MIN_SECRET_CHARS cannot be told apart from ordinary words ("research" as a
password) and is not looked for; the worker warns at start (`short_secrets`).
"""

from __future__ import annotations

import base64
import codecs
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from urllib.parse import unquote

from workflows.cleaning import MAX_TEXT_CHARS, clean
from workflows.models import Decision, ToolCall

MIN_SECRET_CHARS = 12
WINDOW = 12  # any run of this many characters of a secret's form gives the secret away
REDACTED = "[redacted]"
_SEPARATORS = re.compile(r"[\s\-+_.,:;|/\\'\"`~*=()\[\]{}<>]+")
_GAP = r"(?:\s|[-+_.,:;|/\\'\"`~*=])*"


class Scrubber:
    """Finds and removes every configured secret (see the module's docstring)."""

    def __init__(self, secrets: Iterable[str | None] | Mapping[str, str]) -> None:
        values = secrets.values() if isinstance(secrets, Mapping) else secrets
        kept = sorted(
            {value.strip() for value in values if value and len(value.strip()) >= MIN_SECRET_CHARS},
            key=len,
            reverse=True,
        )
        self._patterns = [
            spread_pattern(form) for secret in kept for form in (secret, secret[::-1])
        ]
        forms = [form for secret in kept for form in _forms(secret)]
        self._grams = frozenset(
            gram for form in forms for shape in (form, _compact(form)) for gram in _grams(shape)
        )

    def __bool__(self) -> bool:
        return bool(self._grams)

    def holds(self, text: str) -> bool:
        """Whether `text` carries any form of any secret."""
        if not self._grams or not text:
            return False
        folded = _folded(text)
        if any(pattern.search(folded) for pattern in self._patterns):
            return True
        return self._windows(folded) or self._windows(_compact(folded))

    def scrub(self, text: str) -> str:
        """`text` with every form of every secret replaced by REDACTED: the whole secret, and any
        word holding a window of a form. Folded first (see above); when a form survives the
        word-by-word removal (a secret spread over several words), the whole text goes."""
        if not self.holds(text):
            return text
        kept = _plain(text)
        for pattern in self._patterns:
            kept = pattern.sub(REDACTED, kept)
        kept = re.sub(r"\S+", lambda word: REDACTED if self._word(word[0]) else word[0], kept)
        return REDACTED if self.holds(kept) else kept

    def _word(self, word: str) -> bool:
        folded = _folded(word)
        return self._windows(folded) or self._windows(_compact(folded))

    def _windows(self, folded: str) -> bool:
        grams = self._grams
        return any(
            folded[start : start + WINDOW] in grams for start in range(len(folded) - WINDOW + 1)
        )


def short_secrets(secrets: Mapping[str, str]) -> list[str]:
    """The names of the configured secrets too short for the scrubber to look for."""
    return [name for name, value in secrets.items() if 0 < len(value.strip()) < MIN_SECRET_CHARS]


def _plain(text: str) -> str:
    """JSON's \\u escapes decoded (tool arguments are JSON), NFKC without invisible format
    characters, URL-decoded twice, then NFKC again (a URL-encoded zero-width space is one too);
    letter case kept."""
    return _visible(unquote(unquote(_visible(_JSON_ESCAPES.sub(_unescaped, text)))))


_JSON_ESCAPES = re.compile(r"(?:\\u[0-9a-fA-F]{4})+")


def _unescaped(escapes: re.Match[str]) -> str:
    decoded: str = json.loads(f'"{escapes[0]}"')
    return decoded


def _visible(text: str) -> str:
    return "".join(char for char in unicodedata.normalize("NFKC", text) if not _invisible(char))


def _folded(text: str) -> str:
    return _plain(text).casefold()


def _invisible(char: str) -> bool:
    return unicodedata.category(char) == "Cf"


def _compact(text: str) -> str:
    return _SEPARATORS.sub("", text)


def _forms(secret: str) -> list[str]:
    """The secret and what can be computed from it, case-folded. Base64 and base32 depend on what
    precedes the secret (3 and 5 alignments); the edges of each encoding are left out."""
    raw = secret.encode()
    forms = [secret, secret[::-1], codecs.encode(secret, "rot13"), raw.hex(), raw[::-1].hex()]
    for pad in range(3):
        forms.append(base64.b64encode(b"\0" * pad + raw).decode().rstrip("=")[4:-4])
        forms.append(base64.urlsafe_b64encode(b"\0" * pad + raw).decode().rstrip("=")[4:-4])
    for pad in range(5):
        forms.append(base64.b32encode(b"\0" * pad + raw).decode().rstrip("=")[8:-8])
    return [_folded(form) for form in forms]


def _grams(form: str) -> set[str]:
    if len(form) < WINDOW:
        return set()
    return {form[start : start + WINDOW] for start in range(len(form) - WINDOW + 1)}


def spread_pattern(secret: str) -> re.Pattern[str]:  # also for provider_errors' short keys
    """The whole secret, any letter case, with any separators between its characters."""
    chars = [re.escape(char) for char in _folded(secret) if not char.isspace()]
    return re.compile(_GAP.join(chars), re.IGNORECASE)


# The sentence a refused call gets: it names no secret and repeats none.
SECRET_REFUSAL = (
    "the call held a secret of the worker's configuration and was not run: never send a key, "
    "token or password"
)


def scrubbed_decision(decision: Decision, scrubber: Scrubber) -> Decision:
    """A model turn as it may reach the workflow (history) and the ledger: no secret in its text,
    model name or usage note; a call that carried one refused (SECRET_REFUSAL), scrubbed."""
    if not scrubber:
        return decision
    usage = decision.usage
    return decision.model_copy(
        update={
            "tool_calls": [_scrubbed_call(call, scrubber) for call in decision.tool_calls],
            "text": clean(scrubber.scrub(decision.text), MAX_TEXT_CHARS),
            "model": clean(scrubber.scrub(decision.model), 200),
            "usage": usage.model_copy(update={"note": scrubber.scrub(usage.note)}),
        }
    )


def _scrubbed_call(call: ToolCall, scrubber: Scrubber) -> ToolCall:
    if not any(scrubber.holds(text) for text in (call.id, call.name, call.arguments)):
        return call
    return call.model_copy(
        update={
            "id": scrubber.scrub(call.id),
            "name": scrubber.scrub(call.name),
            "arguments": scrubber.scrub(call.arguments),
            "refusal": SECRET_REFUSAL,
        }
    )
