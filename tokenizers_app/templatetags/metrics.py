"""``{{ value|metric:"compression_ratio" }}``: a metric's value with its unit, as the core defines
it (``bpe.metrics.METRICS``): ``3.420 bytes/token``, ``97.1 %``. Tables say the unit once, in
their heading, and show ``{{ value|metric_number:name }}`` in the cells: ``3.420``. The text
itself is ``bpe.metric_text``'s, which the admin and the commands use too."""

from django import template

from ..bpe.metric_text import metric_label, metric_number, metric_text, metric_unit

register = template.Library()
register.filter("metric_number", metric_number)
register.filter("metric", metric_text)
register.filter("metric_label", metric_label)
register.filter("metric_unit", metric_unit)


@register.filter
def percent(done, total) -> int:
    """``{{ run.progress_done|percent:run.progress_total }}`` -> 0..100."""
    return int(100 * done / total) if total else 0


@register.filter
def seconds(value) -> str:
    """``{{ 75.2|seconds }}`` -> ``1 min 15 s``; ``{{ 3.14|seconds }}`` -> ``3.1 s``;
    ``{{ 0.042|seconds }}`` -> ``42 ms``."""
    if value is None:
        return "—"
    if value < 1:
        return f"{1000 * value:.0f} ms"
    if value < 60:
        return f"{value:.1f} s"
    minutes, rest = divmod(round(value), 60)
    return f"{minutes} min {rest} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


@register.filter
def get(mapping, key):
    """``{{ row.values|get:forloop.counter0 }}``: an item of a dict or list."""
    try:
        return mapping[key]
    except (KeyError, IndexError, TypeError):
        return None


@register.filter
def ordinal(number) -> str:
    """``{{ 121|ordinal }}`` -> ``121st``; 2 -> ``2nd``, 13 -> ``13th``, 23 -> ``23rd``."""
    number = int(number)
    suffix = "th" if number % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(
        number % 10, "th")
    return f"{number}{suffix}"
