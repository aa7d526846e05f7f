"""A metric's value as text, with the unit the core defines for it (``metrics.METRICS``): one
spelling of every number for the pages (through the ``metrics`` template filters), the admin and
the commands.

Shares (unit ``%``) are stored in [0, 1] and shown as percentages; other numbers keep three
decimals below 10 and one above; no value is ``—``; a value the evaluation found undefined
(stored as None: the byte-fallback rate of a text without multi-byte characters) is ``n/a``.
"""

from __future__ import annotations

from .metrics import METRICS

NO_VALUE = "—"
UNDEFINED = "n/a"
NO_BREAK = "\u00a0"  # keeps the ``%`` sign on the line of its number in a table cell


def metric_label(name: str) -> str:
    """``metric_label("compression_ratio") -> "Compression ratio"``; an unknown name is itself."""
    return METRICS[name][0] if name in METRICS else name


def metric_unit(name: str) -> str:
    """``metric_unit("compression_ratio") -> "bytes/token"``; ``metric_unit("bytes") -> ""``."""
    return METRICS[name][1] if name in METRICS else ""


def metric_shown(value, name: str) -> float | None:
    """The value in the unit it is shown in, for tables and chart axes alike: shares as
    percentages, ``metric_shown(0.8, "word_coverage") -> 80.0``; other numbers as they are,
    ``metric_shown(3.42, "compression_ratio") -> 3.42``; ``None`` stays ``None``."""
    if value is None or value == "":
        return None
    return 100 * value if metric_unit(name) == "%" else value


def metric_number(value, name: str, percent_sign: bool = True) -> str:
    """The number alone, for a table whose heading carries the unit: ``metric_number(3.42,
    "compression_ratio") -> "3.420"``; shares keep their sign, joined by a no-break space:
    ``metric_number(0.971, "word_coverage") -> "97.1\\u00a0%"`` (``"97.1"`` with
    ``percent_sign=False``, under a heading that says ``%``); ``metric_number(None, ...) ->
    "—"``."""
    shown = metric_shown(value, name)
    if shown is None:
        return NO_VALUE
    if metric_unit(name) == "%":
        return f"{shown:.1f}" + (f"{NO_BREAK}%" if percent_sign else "")
    return f"{shown:.3f}" if abs(shown) < 10 else f"{shown:,.1f}"


def metric_text(value, name: str) -> str:
    """The number with its unit, as plain text (terminals too): ``metric_text(3.42,
    "compression_ratio") -> "3.420 bytes/token"``; ``metric_text(0.971, "word_coverage") ->
    "97.1 %"``."""
    number = metric_number(value, name).replace(NO_BREAK, " ")
    unit = metric_unit(name)
    return number if number == NO_VALUE or unit in ("", "%") else f"{number} {unit}"


def reported_text(metrics: dict, name: str, number_only: bool = False) -> str:
    """A metric of an evaluation's ``metrics`` as text: ``reported_text({"byte_fallback_rate":
    None}, "byte_fallback_rate") -> "n/a"`` (undefined there), ``reported_text({},
    "unknown_rate") -> "—"`` (not reported), else ``metric_text`` (or, ``number_only``, the
    number without unit or ``%`` sign, under a heading that has them)."""
    if name in metrics and metrics[name] is None:
        return UNDEFINED
    if number_only:
        return metric_number(metrics.get(name), name, percent_sign=False)
    return metric_text(metrics.get(name), name)
