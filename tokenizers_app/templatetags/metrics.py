"""``{{ value|metric:"compression_ratio" }}``: a metric's value with its unit, as the core defines
it (``bpe.metrics.METRICS``): ``3.420 bytes/token``, ``97.1 %``. Tables say the unit once, in
their heading, and show ``{{ value|metric_number:name }}`` in the cells: ``3.420``."""

from django import template

from ..bpe.metrics import METRICS

register = template.Library()


@register.filter
def metric_number(value, name: str) -> str:
    """The number alone, for a table whose row heading carries the unit: ``3.420``; shares keep
    their sign, ``97.1 %`` (joined by a no-break space); no value is ``—``."""
    if value is None or value == "":
        return "—"
    if metric_unit(name) == "%":
        return f"{100 * value:.1f}\u00a0%"  # a no-break space: the sign stays with its number
    return f"{value:.3f}" if abs(value) < 10 else f"{value:,.1f}"


@register.filter
def metric(value, name: str) -> str:
    number = metric_number(value, name).replace("\u00a0", " ")  # plain text for terminals too
    unit = metric_unit(name)
    return number if number == "—" or unit in ("", "%") else f"{number} {unit}"


@register.filter
def metric_label(name: str) -> str:
    return METRICS[name][0] if name in METRICS else name


@register.filter
def metric_unit(name: str) -> str:
    return METRICS[name][1] if name in METRICS else ""


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
