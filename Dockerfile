# The registry's image: the web app (gunicorn) and the Celery workers run from it.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

COPY pyproject.toml manage.py ./
COPY registry registry
COPY tokenizers_app tokenizers_app
RUN pip install . gunicorn

ENV DEBUG=0 STATIC_ROOT=/app/static MEDIA_ROOT=/data/media REGISTRY_VAR_DIR=/data/var
RUN mkdir -p /data/media /data/var \
    && SECRET_KEY="$(python -c 'import secrets; print(secrets.token_urlsafe(50))')" \
       python manage.py collectstatic --noinput --verbosity 0 \
    && useradd --create-home registry \
    && chown -R registry:registry /data
USER registry

EXPOSE 8000
CMD ["gunicorn", "registry.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--threads", "4", "--timeout", "120"]
