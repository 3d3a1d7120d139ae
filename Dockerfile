# The console's application image: web server, Celery worker and Celery beat all run from it.
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY . /app
# Installs the dependencies from pyproject.toml. The processes run from /app (python manage.py,
# python -m celery), so templates/ and static/ are found next to the code.
RUN pip install . \
    && useradd --create-home --uid 1000 console \
    && mkdir -p /app/var \
    && chown -R console:console /app/var

USER console
# var/ holds the generated secret key (when SECRET_KEY is unset) and the beat schedule; compose
# shares it between web, worker and beat so all of them use the same keys.
VOLUME ["/app/var"]
EXPOSE 8000
CMD ["gunicorn", "-c", "console/gunicorn_conf.py", "--bind", "0.0.0.0:8000", "console.wsgi"]
