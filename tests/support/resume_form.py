"""The Prefect UI's Resume dialog for a flow run paused for input, driven as a person uses
it in the browser: open the flow run's page, press Resume, read the description and the
form, choose from the pick-list, type into the text fields, press Submit.

Typing goes through the DevTools protocol's ``Input.insertText`` (as keystrokes reach the
page); a pick-list is a native ``<select>`` whose choice is set and announced with a
``change`` event, which is what choosing from it with the mouse does."""

from __future__ import annotations

import asyncio
import json
import time

from tests.support.cdp import DevToolsPage, shown_text

__all__ = ["ResumeDialog"]

MODAL = ".p-modal"
_RECORD_RESUME_CALLS = """(() => {
  if (window.__resumeCalls) return;
  window.__resumeCalls = [];
  const send = XMLHttpRequest.prototype.send;
  const open = XMLHttpRequest.prototype.open;
  XMLHttpRequest.prototype.open = function (method, url) {
    this.__url = String(url);
    return open.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function (body) {
    if (this.__url.includes('/resume')) {
      this.addEventListener('loadend', () => window.__resumeCalls.push(
        {status: this.status, body: String(body), response: String(this.responseText)}));
    }
    return send.apply(this, arguments);
  };
})()"""
"""Keeps what the dialog sent to the server's resume endpoint, and what it answered."""


class ResumeDialog:
    """The Resume dialog of the flow run shown on ``page``."""

    def __init__(self, page: DevToolsPage) -> None:
        self.page = page

    async def open(self, *needles: str, timeout_s: float = 90) -> str:
        """Press the page's Resume button (once the run shows as paused) and wait until
        the dialog shows ``needles``; the dialog's text."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            pressed = await self.page.evaluate(
                "(() => { const b = Array.from(document.querySelectorAll('button'))"
                ".find(b => b.innerText.trim() === 'Resume');"
                " if (!b) return false; b.click(); return true })()"
            )
            if pressed:
                break
            await asyncio.sleep(0.5)
        else:
            raise AssertionError(f"no Resume button; the page showed:\n{await self.page.text()}")
        text = await self.wait_for(*needles, timeout_s=max(5.0, deadline - time.monotonic()))
        # the form fills in its defaults once its schema arrives: a choice made before
        # that is overwritten
        await asyncio.sleep(1.5)
        return text

    async def text(self) -> str:
        script = (
            f"(() => {{ const m = document.querySelector('{MODAL}');"
            " return m ? m.innerText : '' })()"
        )
        return str(await self.page.evaluate(script) or "")

    async def wait_for(self, *needles: str, timeout_s: float = 60) -> str:
        return await shown_text(self.text, needles, timeout_s=timeout_s, what="dialog", every_s=0.3)

    async def field(self, label: str) -> str:
        """A JavaScript expression for the input of the field titled ``label``."""
        return (
            f"Array.from(document.querySelectorAll('{MODAL} .schema-form-property'))"
            f".find(p => p.querySelector('.schema-form-property__label').innerText"
            f".replace(' (Optional)', '').trim() === {json.dumps(label)})"
        )

    async def options(self, label: str) -> list[str]:
        """The choices of the pick-list titled ``label``."""
        field = await self.field(label)
        values = await self.page.evaluate(
            f"Array.from({field}.querySelector('select').options).map(o => o.value)"
        )
        return [str(value) for value in values or []]

    async def choose(self, label: str, value: str) -> None:
        field = await self.field(label)
        chosen = await self.page.evaluate(
            f"(() => {{ const s = {field}.querySelector('select');"
            f" s.value = {json.dumps(value)};"
            " s.dispatchEvent(new Event('change', {bubbles: true})); return s.value })()"
        )
        assert chosen == value, f"{label}: {value!r} is not a choice ({chosen!r})"

    async def value(self, label: str) -> str:
        field = await self.field(label)
        return str(await self.page.evaluate(f"{field}.querySelector('textarea, input').value"))

    async def type_into(self, label: str, text: str) -> None:
        """Replace what the field titled ``label`` holds with ``text``, typed."""
        field = await self.field(label)
        await self.page.evaluate(
            f"(() => {{ const e = {field}.querySelector('textarea, input');"
            " e.focus(); e.select(); })()"
        )
        await self.page.call("Input.insertText", text=text)

    async def submit(self, timeout_s: float = 30) -> None:
        """Press Submit; return once the dialog closed (the server took the answer), or
        fail with what the dialog says (a field it refused) and what the server answered."""
        await self.page.evaluate(_RECORD_RESUME_CALLS)
        await self.page.evaluate(
            f"Array.from(document.querySelectorAll('{MODAL} button'))"
            ".find(b => b.innerText.trim() === 'Submit').click()"
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not await self.text():
                return
            await asyncio.sleep(0.3)
        raise AssertionError(
            f"the dialog stayed open after Submit:\n{await self.text()}\n"
            f"the page said:\n{(await self.page.text())[-1500:]}\n"
            f"the resume calls: {await self.page.evaluate('window.__resumeCalls')}"
        )
