"""Showing a premium: ``{{ score.premium|premium }}`` -> ``1.37×``, and the heat map's shade
class ``{{ score.premium|premium_shade }}`` -> ``p3`` (the number is always written in the
cell, so the map reads in black and white too)."""

from django import template

register = template.Library()

SHADES = [(1.1, "p1"), (1.5, "p2"), (2.0, "p3"), (3.0, "p4")]  # above the last: p5


@register.filter
def premium(value) -> str:
    return "—" if value is None else f"{value:.2f}×"


@register.filter
def premium_shade(value) -> str:
    """``premium_shade(1.0) -> "p1"``, ``premium_shade(2.5) -> "p4"``, None -> ``"p0"``."""
    if value is None:
        return "p0"
    return next((shade for most, shade in SHADES if value <= most), "p5")


@register.filter
def share(value) -> str:
    return "—" if value is None else f"{100 * value:.0f}\u00a0%"


@register.filter
def rate(value) -> str:
    return "—" if value is None else f"{100 * value:.2f}\u00a0%"


@register.filter
def number(value, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


@register.filter
def score_of(row, language):
    """``row.scores[language]`` for templates."""
    return row.scores.get(language)


@register.filter
def lowest(result, language):
    """The lowest premium of ``language`` among the result's versions (None when none)."""
    premiums = [row.scores[language].premium for row in result.versions
                if row.scores[language].premium is not None]
    return min(premiums, default=None)
