"""The Parse pane: each call's verdict at the step, then the diagnostics so far.

A call has no verdict while it is still streaming (``result_at`` is None);
once its choice finishes (or an error or the end of the stream closes it) the
engine's finalize result is shown: the status, the parsed value, the repairs
with the raw and repaired text side by side, and the raw text as received.
"""

from __future__ import annotations

import json
import re
from difflib import SequenceMatcher
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.highlighter import JSONHighlighter
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import events
from textual.binding import BindingType
from textual.color import Color
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from ...engine.calls import Call
from ...engine.diagnostics import Diagnostic
from ...engine.finalize import Result
from ...engine.plural import counted
from ...redact import TextScrub
from ..keys import PANE_BINDINGS
from ..scrubbed import scrubbed, window_end, window_start
from ..steps import StepIndex
from .buffers import CallCard, call_title
from .cells import cell_safe
from .cut import MORE, cut_string
from .fit_marks import fit_details, fit_verdict, marked_value
from .prerendered import Prerendered
from .styled import ComponentStyles
from .titled import Titled

#: how a status reads without colour too
STATUS_GLYPH = {
    "ok": "✔ ok",
    "empty": "○ empty",
    "repaired": "✚ repaired",
    "truncated": "✂ truncated",
    "invalid": "✖ invalid",
    "aborted": "■ aborted",
}
STATUS_MEANING = {
    "ok": "strict JSON, exactly as sent",
    "empty": "no argument text; read as {}",
    "repaired": "not JSON as sent; repaired:",
    "truncated": "the text ends inside an open value",
    "invalid": "not JSON, and no honest repair",
    "aborted": "an error event cut the call off",
}
SEVERITY_GLYPH = {"info": "●", "warning": "▲", "error": "✖"}
#: lines of pretty-printed value shown before cutting: as many as the pane has
#: room for beside the other calls, within these bounds
VALUE_LINES = 30
MIN_VALUE_LINES = 6
RAW_CHARS = 600
DIAGNOSTICS_SHOWN = 200

_json = JSONHighlighter()
_PRETTY = json.JSONEncoder(indent=2, ensure_ascii=False)


def _bounded(value: Any, items: list[int], scrub: TextScrub | None) -> tuple[Any, bool]:
    """A copy of ``value`` with at most ``items[0]`` scalars and containers
    (each takes at least one line) and every string cut to ``STRING_CHARS``,
    the cut said inside it; and whether anything was left out. The walk stops
    with the budget, so it costs what the screen shows, not what the value holds."""
    items[0] -= 1
    if isinstance(value, str):
        return cut_string(value, scrub)
    cut = False
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if items[0] <= 0:
                return out, True
            out[key], inner = _bounded(item, items, scrub)
            cut = cut or inner
        return out, cut
    if isinstance(value, list):
        seq: list[Any] = []
        for item in value:
            if items[0] <= 0:
                return seq, True
            shown, inner = _bounded(item, items, scrub)
            seq.append(shown)
            cut = cut or inner
        return seq, cut
    return value, False


def pretty(
    value: Any, lines: int = VALUE_LINES, more: str = MORE, scrub: TextScrub | None = None
) -> Text:
    """``value`` as indented JSON, cut after ``lines`` lines and with long
    strings cut: the text rendered is bounded by the screen, never by the value.
    With ``scrub``, the stream's credentials are taken out of what is shown."""
    shown, cut = _bounded(value, [lines + 1], scrub)
    text = _PRETTY.encode(shown)
    if text.count("\n") >= lines:
        text = "\n".join(text.split("\n")[:lines])
        cut = True
    if cut:
        text += f"\n… ({more})"
    out = _json(Text(cell_safe(text)))
    return scrubbed(out, scrub) if scrub else out


def clip(text: str, limit: int = RAW_CHARS, scrub: TextScrub | None = None) -> str:
    """``text``'s two ends around a count of what is left out. With ``scrub``, a
    value either cut crosses is kept whole, for the caller's ``scrubbed`` to
    find: the two halves of a key cut in the middle would show it whole."""
    if len(text) > limit:
        head, tail = limit // 2, len(text) - limit // 2
        if scrub:
            head = window_end(text, 0, head, scrub)
            tail = max(head, window_start(text, tail, len(text), scrub))
        text = text[:head] + f" …{tail - head:,} chars… " + text[tail:]
    return cell_safe(text)



#: the spaced separators most senders use (``{"a": 1, "b": 2}``, quoted either way)
_SPACED = re.compile(r"""["'][:,] """)


def laid_out_as(raw: str, result: Result) -> str:
    """The repaired text to show beside ``raw``: the engine's is compact JSON,
    so beside a text sent with spaces after its colons and commas it read as if
    the repair had taken them out; it is written with the same separators then,
    and the side by side shows only what the repair changed."""
    text = result.repaired_text or ""
    if not result.has_value or not _SPACED.search(raw):
        return text
    return json.dumps(result.arguments, ensure_ascii=False, separators=(", ", ": "))

class CallResult(ComponentStyles, Prerendered):
    """One call's verdict at the app's step."""

    STYLE_PREFIX = "call-result"

    COMPONENT_CLASSES = {
        "call-result--meta",
        "call-result--heading",
        "call-result--ok",
        "call-result--empty",
        "call-result--repaired",
        "call-result--truncated",
        "call-result--invalid",
        "call-result--aborted",
        "call-result--streaming",
        "call-result--removed",
        "call-result--added",
        "call-result--fit-ok",
        "call-result--fit-bad",
        "call-result--fit-unchecked",
        "call-result--fit-mark",
        "call-result--info",
        "call-result--warning",
        "call-result--error",
    }

    def __init__(self, index: StepIndex, call: Call, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.index = index
        self.call = call
        self.step = 0
        self.result: Result | None = None
        self._status = ""
        self._shows: tuple = ()
        self.value_lines = VALUE_LINES

    def show(self, step: int) -> None:
        call = self.call
        self.display = call.first_event <= step
        self.result = call.result_at(step) if self.display else None
        status = self.result.status if self.result else "streaming"
        if status != self._status:
            self._status = status
            self._paint_stripe()
        # while a call streams its verdict does not change: no re-render per step
        # (and a verdict holds only while no fragment comes after it)
        outputs = sum(1 for e, _, _ in call.outputs if e <= step)
        # (the fit of a live call comes once its stream closed)
        fit = self.index.fit
        now = len(self._raised_now(step))
        shows = (
            self.display, id(self.result), call.name_at(step), self.value_lines, id(fit), outputs,
            now, now and step,
        )
        self.step = step
        if shows != self._shows:
            self._shows = shows
            self.update_content()

    def _paint_stripe(self) -> None:
        """The left stripe takes the status badge's colour. An inline style:
        a class change restyles the widget, which costs more than a step."""
        if not self.is_mounted:
            return  # on_mount paints it
        badge = self._style(self._status or "streaming")
        color = badge.bgcolor or badge.color
        if color is not None:
            self.styles.border_left = ("tall", Color.from_rich_color(color))

    def on_mount(self) -> None:
        self._paint_stripe()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._paint_stripe()  # a new theme

    def on_click(self, event: events.Click) -> None:
        self.post_message(CallCard.Chosen(self.call.seq))

    def _raised_now(self, step: int) -> list[Diagnostic]:
        """The diagnostics this call raised at event ``step``."""
        return self.index.raised.get((step, self.call.seq), [])

    def _now_lines(self, step: int) -> list[RenderableType]:
        """What this call raised at the step, under its verdict: where ] lands,
        the call and the diagnostic are read together, at any pane height."""
        out: list[RenderableType] = []
        for d in self._raised_now(step):
            # one line each, so that every one of them fits under the verdict; the
            # Diagnostics list below has them whole
            line = Text(no_wrap=True, overflow="ellipsis")
            line.append(f"{SEVERITY_GLYPH[d.severity]} {d.code}", self._style(d.severity))
            line.append(f" at e{step}: {d.message}")
            out.append(scrubbed(line, self.index.scrub))
        return out

    def content(self, width: int) -> RenderableType:
        call, step, result = self.call, self.step, self.result
        scrub = self.index.scrub
        position = self.index.position.get(call.seq, call.seq)
        head = Text()
        head.append(call_title(call, step, position), self._style("heading"))
        head.append("  ")
        meta = self._style("meta")
        if result is None:
            head.append("… streaming, no verdict yet", self._style("streaming"))
            return Group(scrubbed(head, scrub), *self._now_lines(step), *self._output(step))
        head.append(f" {STATUS_GLYPH[result.status]} ", self._style(result.status))
        # the fit judges the final verdict: shown beside it, not beside an earlier one
        fit = self.index.fit.calls.get(call.seq) if self.index.fit else None
        if fit is not None and result is call.result:
            styles = {k: self._style(f"fit-{k}") for k in ("ok", "bad", "unchecked")}
            head.append(" ")
            head.append_text(fit_verdict(fit, styles))
        else:
            fit = None
        head.append(f"\n{STATUS_MEANING[result.status]}", meta)
        parts: list[RenderableType] = [scrubbed(head, scrub), *self._now_lines(step)]
        details = fit_details(fit, meta, scrub) if fit is not None else None
        if details is not None:
            parts.append(details)
        if result.repairs:
            log = Text()
            for i, change in enumerate(result.repairs):
                log.append(("\n" if i else "") + "• " + change)
            parts.append(log)
        raw = call.text[: call.length_at(step)]
        if result.repaired_text is not None and result.status != "ok":
            table = Table.grid(padding=(0, 1), expand=True)
            table.add_column(ratio=1)
            table.add_column(ratio=1)
            other = {"repaired": "repaired", "invalid": "json-repair's guess, not used"}
            table.add_row(
                Text("raw, as sent", meta), Text(other.get(result.status, "best effort"), meta)
            )
            repaired = laid_out_as(raw, result)
            left, right = self._diff(clip(raw, scrub=scrub), clip(repaired, scrub=scrub))
            table.add_row(scrubbed(left, scrub), scrubbed(right, scrub))
            parts.append(table)
        elif result.status != "ok":
            sent = clip(raw, scrub=scrub) or "(nothing)"
            shown = Text.assemble(("raw, as sent  ", meta), (sent, ""))
            parts.append(scrubbed(shown, scrub))
        if result.has_value:
            if result.status not in ("ok", "empty"):
                label = "value" if result.status == "repaired" else "best-effort value"
                parts.append(Text(label, meta))
            marked = {e.pointer for e in fit.errors} if fit is not None else set()
            if marked:
                mark = self._style("fit-mark")
                parts.append(
                    marked_value(result.arguments, marked, mark, self.value_lines, scrub)
                )
            else:
                parts.append(pretty(result.arguments, self.value_lines, scrub=scrub))
        if result.values:
            parts.append(Text(f"{counted(len(result.values), 'separate value')} came:", meta))
            parts.extend(pretty(v, 8, scrub=scrub) for v in result.values)
        if call.inner_calls and result is call.result:
            held = counted(len(call.inner_calls), "call")
            parts.append(Text(f"the {held} this wrapper holds:", meta))
            for inner in call.inner_calls:
                parts.append(Text(inner["name"], self._style("heading")))
                parts.append(pretty(inner["arguments"], 8, scrub=scrub))
        parts.extend(self._output(step))
        return Group(*parts)

    def _output(self, step: int) -> list[RenderableType]:
        """The tool's result, when the stream carried it (the AI SDK UI stream):
        the last one up to the step (earlier ones were preliminary)."""
        came = [o for o in self.call.outputs if o[0] <= step]
        if not came:
            return []
        event, output, error = came[-1]
        meta = self._style("meta")
        if error is not None:
            shown = Text.assemble((f"tool error (e{event})  ", meta), (error, ""))
            return [scrubbed(shown, self.index.scrub)]
        output_text = pretty(output, self.value_lines, scrub=self.index.scrub)
        return [Text(f"tool output (e{event})", meta), output_text]


    def _diff(self, raw: str, repaired: str) -> tuple[Text, Text]:
        """The two texts with what the repair took out marked on the left and
        what it put in on the right (a character diff of the shown texts)."""
        left, right = Text(raw, overflow="fold"), Text(repaired, overflow="fold")
        removed, added = self._style("removed"), self._style("added")
        matcher = SequenceMatcher(None, raw, repaired, autojunk=False)
        for op, a0, a1, b0, b1 in matcher.get_opcodes():
            if op in ("replace", "delete"):
                left.stylize(removed, a0, a1)
            if op in ("replace", "insert"):
                right.stylize(added, b0, b1)
        return left, right


class DiagnosticsView(ComponentStyles, Titled, Prerendered):
    """The diagnostics up to the step, each with a link to its event."""

    STYLE_PREFIX = "diagnostics"

    COMPONENT_CLASSES = {
        "diagnostics--info",
        "diagnostics--warning",
        "diagnostics--error",
        "diagnostics--event",
        "diagnostics--meta",
        "diagnostics--now",
    }

    def __init__(self, index: StepIndex, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.index = index
        self.step = 0
        self.found: list[Diagnostic] = []
        self._shows: tuple = ()
        self.border_title = "Diagnostics"

    def show(self, step: int) -> None:
        self.step = step
        self.found = self.index.diagnostics_at(step)
        # the list only grows with the step; the one at this event is emphasized
        shows = (len(self.found), any(d.event == step for d in self.found))
        if shows != self._shows:
            self._shows = shows
            total = len(self.index.diagnostics_at(None))
            self.set_titles(subtitle=f"{len(self.found)} of {total}")
            self.update_content()

    def content(self, width: int) -> RenderableType:
        step, found = self.step, self.found
        scrub = self.index.scrub
        total = len(self.index.diagnostics_at(None))
        meta = self._style("meta")
        if not found:
            note = "none so far"
            if total:
                note += f"; ] goes to the next of {total}"
            return Text(note, meta)
        table = Table.grid(padding=(0, 1), expand=True)
        table.add_column(no_wrap=True)
        table.add_column(no_wrap=True)
        table.add_column(ratio=1)
        if len(found) > DIAGNOSTICS_SHOWN:
            table.add_row("", "", Text(f"… {len(found) - DIAGNOSTICS_SHOWN:,} earlier", meta))
            found = found[-DIAGNOSTICS_SHOWN:]
        for d in found:
            sev = d.severity
            if d.event is None:
                where = Text("end", meta)
            else:
                link = self._style("event") + Style(meta={"@click": f"app.goto({d.event})"})
                where = Text(f"e{d.event}", link)
            line = Text()
            explained = Style(meta={"@click": f"app.explain({d.code!r})"})
            line.append(d.code, self._style(sev) + explained)
            if d.call is not None:
                line.append(f" #{self.index.position.get(d.call, d.call)}", meta)
            line.append(f" {d.message}")
            if d.event == step:
                line.stylize(self._style("now"))
            table.add_row(Text(SEVERITY_GLYPH[sev], self._style(sev)), where, scrubbed(line, scrub))
        return table


class LeakedCalls(Static):
    """Calls the model meant that never became calls (the report's ``leaked``):
    markup in the text, or a refused call's generation; one line each, from
    the event that carried them."""

    def __init__(self, index: StepIndex, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.index = index
        self._shown = -1

    def show(self, step: int) -> None:
        leaked = [f for f in self.index.stream.reassembler.leaked if f.event <= step]
        self.display = bool(leaked)
        if len(leaked) == self._shown:
            return
        self._shown = len(leaked)
        out = Text()
        for k, found in enumerate(leaked):
            piece, result = found.piece, found.result
            value = result.arguments if result.has_value else found.arguments_text
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            out.append(("\n" if k else "") + f"leaked e{found.event} ", "bold yellow")
            out.append(f"{piece.name or '(no name)'} {STATUS_GLYPH[result.status]} ", "bold")
            out.append(cell_safe(clip(shown, 120, self.index.scrub)))
            out.append(f"  ({piece.family or 'unread'} markup; not a call)", "dim")
        self.update(scrubbed(out, self.index.scrub))


class ParsePane(Titled, VerticalScroll):
    """The verdicts, then the diagnostics."""

    BINDINGS: ClassVar[list[BindingType]] = [*PANE_BINDINGS]

    def __init__(self, index: StepIndex, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.index = index
        self.results: dict[int, CallResult] = {}
        self._scrolled_to: int | None = None
        #: the next scroll puts the selected call's verdict at the top
        self._to_top = False
        self.border_title = "Parse"

    def compose(self):
        yield LeakedCalls(self.index, id="leaked")
        yield DiagnosticsView(self.index, id="diagnostics")

    def show(self, step: int, selected: int | None) -> None:
        self._mount_new()
        counts: dict[str, int] = {}
        shown = sum(call.first_event <= step for call in self.index.calls)
        height = self.scrollable_content_region.height or 2 * VALUE_LINES
        lines = max(MIN_VALUE_LINES, min(VALUE_LINES, height // max(1, shown) - 4))
        for widget in self.results.values():
            widget.value_lines = lines
            widget.show(step)
            if widget.display:
                status = widget.result.status if widget.result else "streaming"
                counts[status] = counts.get(status, 0) + 1
        self.query_one(LeakedCalls).show(step)
        self.query_one(DiagnosticsView).show(step)
        chosen = self.results.get(selected) if selected is not None else None
        if chosen is not None and chosen.display and selected != self._scrolled_to:
            top, self._to_top = self._to_top, False
            self.call_after_refresh(self.scroll_to_widget, chosen, animate=False, top=top)
        self._scrolled_to = selected
        self.set_titles(
            subtitle=" · ".join(f"{n} {s}" for s, n in counts.items()) or "no calls yet"
        )

    def reveal(self) -> None:
        """At the next show, scroll the selected call's verdict to the top (with
        the diagnostics it raised at the step, right under it)."""
        self._scrolled_to = None
        self._to_top = True

    def _mount_new(self) -> None:
        following: Widget = self.query_one(LeakedCalls)
        for call in reversed(self.index.calls):
            widget = self.results.get(call.seq)
            if widget is None:
                widget = self.results[call.seq] = CallResult(self.index, call)
                self.mount(widget, before=following)
            following = widget
