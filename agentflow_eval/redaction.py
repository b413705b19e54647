"""Keeping secrets out of everything a run writes, logs, publishes or prints.

Error text is where keys leak: a provider's 401 body quoting the key it was given, an
agent's exception carrying its configuration, a tool result echoing an environment. One
:class:`Redactor` removes, from any string:

- the values of secret environment variables: the known provider and cloud credentials
  (:data:`SECRET_ENV_VARS`), any variable whose name says it is one (``*_API_KEY``,
  ``*_SECRET*``, ``*_TOKEN``, ``*PASSWORD*``, ...), and the variables named in
  ``$AGENTFLOW_REDACT_ENV`` (comma-separated);
- values registered while the process runs (:func:`register_secret`: a key read from a
  Prefect Secret block, a judge's ``api_key_env``);
- common key shapes (:data:`KEY_PATTERNS`): ``sk-...``, ``AKIA...``, ``AIza...``, GitHub
  and Slack tokens, JWTs, ``Bearer ...`` and ``Authorization:`` values.

A presigned S3 link keeps its access key id (``X-Amz-Credential``): the key id is not the
secret, the signature is, and the link must open where it is printed; the copies stored
in ``published.json`` and ``latest.json`` hold the same link.

Strings are redacted where they become data — a trial as it is written, a judge's error,
a model call's failure — so every later sink (``trials.jsonl``, ``judged.jsonl``,
``results.json``, ``report.html``, ``junit.xml``, published objects, Prefect artifacts)
holds only clean text. Log records are redacted as they are made
(:func:`install_log_redaction`), and the CLI redacts what it prints.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agentflow_eval.files.naming import printable

__all__ = [
    "KEY_PATTERNS",
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "REDACT_ENV",
    "SECRET_ENV_VARS",
    "Redactor",
    "install_log_redaction",
    "might_contain_secret",
    "redact",
    "redact_data",
    "redact_named_data",
    "redactor",
    "register_secret",
    "secret_field",
]

REDACTED = "[REDACTED]"
"""What a secret is replaced with."""

REDACT_ENV = "AGENTFLOW_REDACT_ENV"
"""Names of further environment variables whose values are secrets, comma-separated."""

MIN_SECRET_LENGTH = 8
"""Shorter values are not treated as secrets: replacing every ``"true"`` or ``"1234"`` in
a report would destroy it and protect nothing."""

SECRET_ENV_VARS: frozenset[str] = frozenset(
    {
        "OPENAI_API_KEY",
        "AZURE_OPENAI_API_KEY",
        "AZURE_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS_JSON",
        "VERTEX_API_KEY",
        "MISTRAL_API_KEY",
        "COHERE_API_KEY",
        "CO_API_KEY",
        "GROQ_API_KEY",
        "TOGETHER_API_KEY",
        "TOGETHERAI_API_KEY",
        "FIREWORKS_API_KEY",
        "OPENROUTER_API_KEY",
        "DEEPSEEK_API_KEY",
        "XAI_API_KEY",
        "PERPLEXITYAI_API_KEY",
        "REPLICATE_API_TOKEN",
        "HF_TOKEN",
        "HUGGINGFACE_API_KEY",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_SECURITY_TOKEN",
        "PREFECT_API_KEY",
        "PREFECT_API_AUTH_STRING",
        "LITELLM_MASTER_KEY",
        "LANGFUSE_SECRET_KEY",
        "GITHUB_TOKEN",
    }
)
"""Provider, cloud and service credentials, by their usual variable names."""

_SECRET_NAME = re.compile(
    r"(API_?KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|AUTH_STRING|PRIVATE_KEY)",
    re.IGNORECASE,
)
"""A variable named like one of these holds a secret, whatever its prefix."""

_NOT_SECRET_NAME = re.compile(r"(_FILE|_PATH|_URL|_ENDPOINT|_REGION|_ENV|_NAME|_ID)$", re.I)
"""...unless the name says the value is where or which, not what (``*_TOKEN_FILE``,
``*_API_KEY_ENV``); ``AWS_ACCESS_KEY_ID`` is listed by name above."""

KEY_PATTERNS: tuple[re.Pattern[str], ...] = (
    # OpenAI (sk-, sk-proj-), Anthropic (sk-ant-), and the many providers that copied sk-
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    # AWS access key ids (long-lived AKIA, temporary ASIA)
    re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"),
    # Google API keys
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"),
    # GitHub tokens
    re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
    # Slack tokens
    re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),
    # Hugging Face tokens
    re.compile(r"\bhf_[A-Za-z0-9]{30,}"),
    # JSON Web Tokens
    re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
)
"""Shapes of credentials, recognised wherever they appear."""

_URL_PASSWORD = re.compile(
    r"(?P<head>\b[a-z][a-z0-9+.\-]*://[^\s:/@?#]*:)(?P<value>[^\s@/?#]+)(?=@)",
    re.IGNORECASE,
)
"""The password of credentials in a URL: ``postgres://user:PASSWORD@host``."""

_CREDENTIAL_VALUE = re.compile(
    r"(?P<label>(?-i:\bBearer)\s+|\b(?:authorization|x-api-key|api[-_]?key|access[-_]?token"
    r"|secret[-_]?access[-_]?key|client[-_]?secret|password)[\"']?\s*[:=]\s*[\"']?"
    r"(?:Bearer\s+|Basic\s+)?)(?P<value>(?=[^\s\"']*\d)[A-Za-z0-9_\-\.~\+/=]{8,})",
    re.IGNORECASE,
)
"""A value that follows a credential's label: ``Bearer x``, ``Authorization: x``,
``api_key=x``, ``"password": "x"``."""


_LABEL_STEMS = (
    "bearer",
    "authorization",
    "api-key",
    "api_key",
    "apikey",
    "access_token",
    "access-token",
    "accesstoken",
    "secret",
    "password",
)
"""Lowercase stems of the labels :data:`_CREDENTIAL_VALUE` looks behind."""

_KEY_PREFIXES = (
    "sk-",
    "AKIA",
    "ASIA",
    "AGPA",
    "AIDA",
    "AROA",
    "AIza",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xox",
    "hf_",
    "eyJ",
)
"""How every shape of :data:`KEY_PATTERNS` starts."""


@dataclass(frozen=True)
class _Compiled:
    """The patterns for one set of secret values."""

    values: frozenset[str]
    literal: re.Pattern[str] | None
    spellings: tuple[str, ...]
    """Each secret as written, and as it appears inside a JSON string."""

    @classmethod
    def of(cls, values: frozenset[str]) -> _Compiled:
        # longest first: a secret that contains another is removed whole
        ordered = sorted(values, key=len, reverse=True)
        literal = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        spellings = set(values)
        for value in values:
            spellings.add(json.dumps(value)[1:-1])
            spellings.add(json.dumps(value, ensure_ascii=False)[1:-1])
        return cls(values, literal, tuple(spellings))

    def suspect(self, text: str) -> bool:
        """Whether redaction might change ``text``, plain or JSON (never false when it
        would; sometimes true when it would not): substring searches, cheaper by far than
        the patterns themselves, so clean text costs little."""
        if any(spelling in text for spelling in self.spellings):
            return True
        if any(prefix in text for prefix in _KEY_PREFIXES):
            return True
        if "://" in text and "@" in text:
            return True
        lowered = text.lower()
        return any(stem in lowered for stem in _LABEL_STEMS)


class Redactor:
    """Removes secrets from strings (see the module doc). Thread-safe; the environment is
    read afresh on every call, so a key exported after start-up is still caught."""

    def __init__(self, *, environ: Mapping[str, str] | None = None) -> None:
        self._environ = environ
        self._registered: set[str] = set()
        self._lock = threading.Lock()
        self._compiled = _Compiled.of(frozenset())

    def register(self, value: str | None) -> None:
        """Treat ``value`` as a secret from now on (ignored when shorter than
        :data:`MIN_SECRET_LENGTH`)."""
        if isinstance(value, str) and len(value.strip()) >= MIN_SECRET_LENGTH:
            with self._lock:
                self._registered.add(value.strip())

    def secret_values(self) -> frozenset[str]:
        """Every literal value currently treated as a secret."""
        if self._environ is None:
            candidates, url_secrets = _environ_secrets()
        else:
            candidates = [(name, value) for name, value in self._environ.items()]
            url_secrets = [p for value in self._environ.values() for p in url_passwords(value)]
        environ = self._environ if self._environ is not None else os.environ
        extra = environ.get(REDACT_ENV, "")
        named = {name.strip() for name in extra.split(",") if name.strip()} if extra else set()
        if named:
            candidates = [*candidates, *((n, environ[n]) for n in named if n in environ)]
        values = set(self._registered)
        for name, value in candidates:
            if name in named or _named_secret(name):
                stripped = value.strip()
                if len(stripped) >= MIN_SECRET_LENGTH:
                    values.add(stripped)
        for value in url_secrets:
            if len(value) >= MIN_SECRET_LENGTH:
                values.add(value)
        return frozenset(values)

    def _patterns(self) -> _Compiled:
        values = self.secret_values()
        with self._lock:
            if self._compiled.values != values:
                self._compiled = _Compiled.of(values)
            return self._compiled

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced by :data:`REDACTED`."""
        if not text:
            return text
        patterns = self._patterns()
        if not patterns.suspect(text):
            return text
        return _scrub(text, patterns.literal)

    def might_contain_secret(self, text: str) -> bool:
        """Whether :meth:`redact` might change ``text`` or any string in the JSON document
        ``text`` (never false when it would; sometimes true when it would not)."""
        return self._patterns().suspect(text)

    def redact_data(self, value: Any) -> Any:
        """``value`` (JSON-like: dicts, lists, strings, numbers) with every string in it
        redacted, keys included; other values are returned as they are."""
        patterns = self._patterns()  # once for the whole value, not per string

        def walk(item: Any) -> Any:
            if isinstance(item, str):
                if not item or not patterns.suspect(item):
                    return item
                return _scrub(item, patterns.literal)
            if isinstance(item, list | tuple):
                return [walk(inner) for inner in item]
            if isinstance(item, dict):
                return {(walk(k) if isinstance(k, str) else k): walk(v) for k, v in item.items()}
            return item

        return walk(value)

    def contains_secret(self, text: str) -> bool:
        """Whether ``text`` holds anything :meth:`redact` would remove."""
        return self.redact(text) != text


_LINK_KEY_ID = re.compile(r"[?&](?:X-Amz-Credential|AWSAccessKeyId)=[^&\s\"'<>#]*", re.IGNORECASE)
"""The access key id in a presigned S3 link's query. It is not a secret (the link's
signature is, and it expires); without it the link does not open, so it is kept as
written while the rest of the text is redacted."""


def _scrub(text: str, literal: re.Pattern[str] | None) -> str:
    if "?" in text and _LINK_KEY_ID.search(text):
        kept = _LINK_KEY_ID.findall(text)
        parts = [_scrub_part(part, literal) for part in _LINK_KEY_ID.split(text)]
        return "".join(part + key_id for part, key_id in zip(parts, [*kept, ""], strict=True))
    return _scrub_part(text, literal)


def _scrub_part(text: str, literal: re.Pattern[str] | None) -> str:
    if literal is not None:
        text = literal.sub(REDACTED, text)
    for pattern in KEY_PATTERNS:
        text = pattern.sub(REDACTED, text)
    text = _URL_PASSWORD.sub(lambda match: match.group("head") + REDACTED, text)
    return _CREDENTIAL_VALUE.sub(_keep_label, text)


def url_passwords(value: str) -> list[str]:
    """The passwords of the URLs in ``value`` (``scheme://user:password@host``)."""
    if "://" not in value or "@" not in value:
        return []
    return [match.group("value") for match in _URL_PASSWORD.finditer(value)]


def _environ_secrets() -> tuple[list[tuple[str, str]], list[str]]:
    """The variables of the process environment named like secrets, and the passwords
    inside URLs of any variable (``DATABASE_URL``: such a password may turn up alone, in
    an error message or a server's reply). Read from the environment's own byte mapping
    when there is one, each name judged once, and only again when the environment
    changed: decoding and judging every variable on every call would cost more than the
    redaction."""
    raw = getattr(os.environ, "_data", None)
    if not isinstance(raw, dict):
        items = list(os.environ.items())
        named = [(name, value) for name, value in items if _named_secret(name)]
        return named, [p for _, value in items for p in url_passwords(value)]
    snapshot, found_before, urls_before = _LAST_READ
    if snapshot == raw:  # unchanged: one comparison in C, by identity item by item
        return list(found_before), list(urls_before)
    judged = _SECRET_NAMES
    found = []
    urls: list[str] = []
    for key, value in raw.items():
        name = judged.get(key, _UNJUDGED)
        if name is _UNJUDGED:
            decoded = key if isinstance(key, str) else os.fsdecode(key)
            name = judged[key] = decoded if _named_secret(decoded) else None
        text = value if isinstance(value, str) else os.fsdecode(value)
        if name is not None:
            found.append((name, text))
        urls.extend(url_passwords(text))
    _LAST_READ[:] = [dict(raw), found, urls]
    return found, urls


_LAST_READ: list[Any] = [None, [], []]
"""The environment as last read, the secrets found in it and its URLs' passwords."""
_UNJUDGED: Any = object()
_SECRET_NAMES: dict[Any, str | None] = {}
"""Raw environment keys → the variable's name when it is a secret's, else ``None``."""


@functools.lru_cache(maxsize=4096)
def _named_secret(name: str) -> bool:
    if name in SECRET_ENV_VARS:
        return True
    return bool(_SECRET_NAME.search(name)) and not _NOT_SECRET_NAME.search(name)


def _keep_label(match: re.Match[str]) -> str:
    value = match.group("value")
    if value == REDACTED or value.startswith(REDACTED):
        return match.group(0)
    return f"{match.group('label')}{REDACTED}"


_redactor = Redactor()


def redactor() -> Redactor:
    """The process's redactor."""
    return _redactor


def redact(text: str) -> str:
    """``text`` without secrets (see :class:`Redactor`)."""
    return _redactor.redact(text)


def redact_data(value: Any) -> Any:
    """A JSON-like value with every string in it redacted."""
    return _redactor.redact_data(value)


_SECRET_FIELD = re.compile(
    r"(?:^|[._\-])(?:api[_\-]?key|x[_\-]api[_\-]?key|secret|client[_\-]?secret|token|"
    r"access[_\-]?token|refresh[_\-]?token|id[_\-]?token|password|passwd|pwd|passphrase|"
    r"credentials?|authorization|proxy[_\-]authorization|cookie|set[_\-]cookie|"
    r"private[_\-]?key|session[_\-]?key|signature)$",
    re.IGNORECASE,
)
"""A field (an attribute, a JSON key) whose value is a secret by its name: its last part
names one (``db.password``, ``http.request.header.authorization``, ``api_key``,
``access_token``), where value patterns alone miss a secret of no known shape. Counts of
secrets (``gen_ai.usage.input_tokens``) are not secrets."""


@functools.lru_cache(maxsize=4096)
def secret_field(name: str) -> bool:
    """Whether a field named ``name`` holds a secret by its name (see
    :data:`_SECRET_FIELD`); the same few attribute names come again and again."""
    return bool(_SECRET_FIELD.search(name.strip()))


def redact_named_data(value: Any) -> Any:
    """:func:`redact_data`, and besides, the value of every mapping entry whose key names
    a secret (:func:`secret_field`) replaced by :data:`REDACTED` whatever it holds: for
    records written by others (a production trace's attributes, the arguments its tool
    calls were given), where a password need not look like one."""

    texts: list[str] = []
    if not _named_fields(value, texts) and not might_contain_secret("\n".join(texts)):
        return value  # one look at all of it: most records hold nothing to redact

    def walk(item: Any) -> Any:
        if isinstance(item, dict):
            return {
                key: REDACTED
                if isinstance(key, str) and secret_field(key) and inner not in (None, "")
                else walk(inner)
                for key, inner in item.items()
            }
        if isinstance(item, list | tuple):
            return [walk(inner) for inner in item]
        return item

    return redact_data(walk(value))


def _named_fields(value: Any, texts: list[str]) -> bool:
    """Whether ``value`` has an entry named like a secret (and holding something); its
    texts, keys included, added to ``texts``."""
    found = False
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, dict):
            for key, inner in item.items():
                if isinstance(key, str):
                    texts.append(key)
                    found = found or (secret_field(key) and inner not in (None, ""))
                stack.append(inner)
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found


def might_contain_secret(json_text: str) -> bool:
    """Whether redaction might change the JSON document ``json_text``: a quick check
    before taking a record apart to redact it."""
    return _redactor.might_contain_secret(json_text)


def register_secret(value: str | None) -> None:
    """Treat ``value`` as a secret for the rest of the process: anything that loads a
    credential at run time (a Prefect Secret block, a key read from a file) registers
    it, so that it is redacted wherever it later appears."""
    _redactor.register(value)


def register_secrets(values: Iterable[str | None]) -> None:
    for value in values:
        _redactor.register(value)


# ------------------------------------------------------------------------------ logging


class RedactingFilter(logging.Filter):
    """A logging filter that redacts a record's message, arguments and traceback in place
    (the record is kept). Attach it to a handler, or let :func:`install_log_redaction`
    apply it to every record the process makes."""

    def filter(self, record: logging.LogRecord) -> bool:
        redact_record(record)
        return True


def redact_record(record: logging.LogRecord) -> logging.LogRecord:
    """Redact ``record`` in place: its message is formatted with its arguments first (a
    secret may be in either), and its traceback is formatted and redacted now, so
    handlers print the redacted text. Control characters in the message (an id with an
    escape sequence in it) are shown escaped (:func:`~agentflow_eval.files.naming.printable`)."""
    if getattr(record, "_agentflow_redacted", False):
        return record
    try:
        message = record.getMessage()
    except Exception:  # a broken format string: leave it to the handler to report
        return record
    record.msg = printable(_redactor.redact(message))
    record.args = None
    if record.exc_info and not record.exc_text:
        record.exc_text = logging.Formatter().formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = _redactor.redact(record.exc_text)
    if record.stack_info:
        record.stack_info = _redactor.redact(record.stack_info)
    record._agentflow_redacted = True
    return record


_installed = False
_install_lock = threading.Lock()


def install_log_redaction() -> None:
    """Redact every log record this process makes, whichever logger and handler it goes
    to (the terminal, a file, Prefect's API log handler): the record factory is wrapped,
    so records are clean before any handler sees them. Idempotent."""
    global _installed
    with _install_lock:
        if _installed:
            return
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            return redact_record(previous(*args, **kwargs))

        logging.setLogRecordFactory(factory)
        _installed = True
