# The registry's image: the web app (gunicorn) and the Celery workers run from it.

# The build stage has a C compiler: it builds the package's wheel with the compiled BPE loops
# (setup.py) and takes their modules out of it for the source tree the image runs from.
FROM python:3.11-slim AS build
RUN apt-get update -q && apt-get install -y -q --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml setup.py manage.py ./
COPY registry registry
COPY tokenizers_app tokenizers_app
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels . \
    && python -m zipfile -e /wheels/tokenizer_registry-*.whl /tmp/wheel \
    && cp /tmp/wheel/tokenizers_app/bpe/*_compiled.*.so tokenizers_app/bpe/

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

COPY pyproject.toml setup.py manage.py constraints.txt ./
COPY registry registry
COPY tokenizers_app tokenizers_app
COPY --from=build /wheels /wheels
COPY --from=build /app/tokenizers_app/bpe/*.so tokenizers_app/bpe/
# the versions the suite passed with (the lock, see the README's "Two commands")
RUN pip install -c constraints.txt /wheels/tokenizer_registry-*.whl gunicorn && rm -rf /wheels \
    && python -c "from tokenizers_app.bpe.compiled import CORE_PATH, IS_COMPILED; \
assert IS_COMPILED, CORE_PATH; print('BPE core:', CORE_PATH)"

ENV DEBUG=0 STATIC_ROOT=/app/static MEDIA_ROOT=/data/media REGISTRY_VAR_DIR=/data/var
RUN mkdir -p /data/media /data/var \
    && SECRET_KEY="$(python -c 'import secrets; print(secrets.token_urlsafe(50))')" \
       python manage.py collectstatic --noinput --verbosity 0 \
    && useradd --create-home registry \
    && chown -R registry:registry /data
USER registry

EXPOSE 8000
CMD ["gunicorn", "registry.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--threads", "4", "--timeout", "120"]
