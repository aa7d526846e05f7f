from django.apps import AppConfig
from django.core import checks


class TokenizersAppConfig(AppConfig):
    name = "tokenizers_app"
    verbose_name = "Tokenizer registry"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from .storage import storage_url

        storage_url()  # a STORAGE_URL that names no bucket stops every process at start-up
        checks.register(check_storage, "storage")


def check_storage(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """``manage.py check``: the bucket of ``STORAGE_URL`` answers and exists (local disk: no
    check)."""
    from .storage import store_check

    return [checks.Error(problem, hint="check STORAGE_URL, AWS_ENDPOINT_URL and the keys",
                         id="tokenizers_app.E001") for problem in store_check()]
