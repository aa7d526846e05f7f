"""A budget for custom patterns in the web process: every request may spend at most
``WEB_MATCH_SECONDS`` (processor seconds, 2 by default) splitting text with custom patterns, in
all (the encode API, the playground, any page that encodes). Past it the split stops, the request
is answered 422 in words ("this version's pattern takes too long on this text"), and the web
worker is free again. Workers (training, evaluation) set no budget: they keep ``MATCH_SECONDS``
per text."""

from django.conf import settings
from django.http import HttpResponse

from .bpe.match_budget import PatternTooSlow, match_budget


class PatternBudgetMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        seconds = settings.WEB_MATCH_SECONDS
        with match_budget(seconds, f"the {seconds:g} s of processor time a request may spend "
                                   f"splitting text (WEB_MATCH_SECONDS)"):
            return self.get_response(request)

    def process_exception(self, request, exception):
        """A page that met the budget's end answers 422 with the reason (the API answers it in
        JSON, by its own handler of the class; the playground shows it on its page)."""
        if isinstance(exception, PatternTooSlow):
            return HttpResponse(str(exception), status=PatternTooSlow.status,
                                content_type="text/plain; charset=utf-8")
        return None
