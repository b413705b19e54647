"""Content-Security-Policy for self-contained pages: nothing loads from anywhere, and
the only script and style that run are the page's own inline ones, named by hash.

A hash (rather than a nonce) suits a static file: it is computed from the exact text
of the inline block at render time, so any other script in the page (say, one an agent
answer smuggled in, were escaping ever to fail) has no matching hash and never runs.
"""

from __future__ import annotations

import base64
import hashlib

__all__ = ["content_security_policy", "csp_hash"]


def csp_hash(source: str) -> str:
    """The CSP source expression for an inline block: ``'sha256-<base64>'`` of its UTF-8
    text, exactly as it appears between the tags."""
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def content_security_policy(*, scripts: list[str], styles: list[str]) -> str:
    """A policy that denies everything but the given inline ``scripts`` and ``styles``
    (and ``data:`` images, for the page icon)."""
    script_src = " ".join(csp_hash(s) for s in scripts) if scripts else "'none'"
    style_src = " ".join(csp_hash(s) for s in styles) if styles else "'none'"
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src {script_src}",
            f"style-src {style_src}",
            "img-src data:",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )
