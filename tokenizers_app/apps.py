from django.apps import AppConfig


class TokenizersAppConfig(AppConfig):
    name = "tokenizers_app"
    verbose_name = "Tokenizer registry"
    default_auto_field = "django.db.models.BigAutoField"
