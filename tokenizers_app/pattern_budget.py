"""A budget for custom patterns in the web process: every request may spend at most
``WEB_MATCH_SECONDS`` (processor seconds of the thread that serves it, 2 by default) splitting text
with custom patterns, in all (the encode API, the playground, any page that encodes). Past it the
split stops, the request is answered 422 in words ("this version's pattern takes too long on
this text"), and the web worker is free again. Other requests served by the same process at the
same time spend their own budgets, never this one's.

At most ``WEB_MATCH_SLOTS`` requests of a process split text with custom patterns at once and
``WEB_MATCH_QUEUE`` more wait for a slot (up to ``WEB_MATCH_SECONDS`` by the wall clock); any
other is answered 429 in words at once, so pattern-heavy requests never take every thread of a
web process from ordinary pages and ``/health``. Workers (training, evaluation) set no budget:
they keep ``MATCH_SECONDS`` per text."""

import functools

from django.conf import settings
from django.http import HttpResponse

from .bpe.match_budget import Gate, PatternBusy, PatternTooSlow, match_budget


@functools.cache
def process_gate(slots: int, queue: int, wait: float) -> Gate:
    """The one gate of this process for these settings."""
    return Gate(slots, queue, wait, f"{slots} at once and {queue} waiting in each web process: "
                                    f"WEB_MATCH_SLOTS, WEB_MATCH_QUEUE")


class PatternBudgetMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        seconds = settings.WEB_MATCH_SECONDS
        gate = process_gate(settings.WEB_MATCH_SLOTS, settings.WEB_MATCH_QUEUE, seconds)
        with match_budget(seconds, f"the {seconds:g} s of processor time a request may spend "
                                   f"splitting text (WEB_MATCH_SECONDS)", gate):
            return self.get_response(request)

    def process_exception(self, request, exception):
        """A page that met the budget's end answers 422 with the reason, one that found no slot
        429 (the API answers them in JSON, by its own handler of the classes; the playground
        shows them on its page)."""
        if isinstance(exception, (PatternTooSlow, PatternBusy)):
            response = HttpResponse(str(exception), status=exception.status,
                                    content_type="text/plain; charset=utf-8")
            if isinstance(exception, PatternBusy):
                response["Retry-After"] = "5"
            return response
        return None
