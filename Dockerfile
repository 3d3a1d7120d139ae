# The console's application image: the web server, every Celery worker (poll, admin, batch: the batch
# worker runs the Spark pipeline, hence Java) and Celery beat run from it (docker-compose.yml,
# docs/production.md). Bookworm, not the newer Debian of the unsuffixed tag: it has Java 17.
#
#   docker build -t kafka-operator-console .
#   docker build --build-arg EXTRAS= -t kafka-operator-console:slim .   # without LDAP login and GSSAPI clusters

# Every extra the console runs with, comma-separated ("dev" is the test suite's and stays out).
ARG EXTRAS=ldap,kerberos

# -- builder: the Python dependencies in /opt/venv, built with the compilers python-ldap needs --------
FROM python:3.11-slim-bookworm AS builder

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# python-ldap (the "ldap" extra) builds from source against OpenLDAP and Cyrus SASL; python gssapi (the
# "kerberos" extra: GSSAPI cluster connections) against MIT Kerberos (krb5-config comes with libkrb5-dev).
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential libldap2-dev libsasl2-dev libkrb5-dev \
    && rm -rf /var/lib/apt/lists/*

ARG EXTRAS
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
# Only pyproject.toml, so this layer is rebuilt when the dependencies change, not the code. The project
# itself is uninstalled again: its code runs from /app (templates/ and static/ are found next to it).
COPY pyproject.toml /src/pyproject.toml
RUN pip install "/src${EXTRAS:+[$EXTRAS]}" \
    && pip uninstall -y kafka-operator-console
# The console's own C extension (the Metadata decoder) is built here, where the compiler is, and copied
# next to its source in /app below.
COPY setup.py /src/setup.py
COPY console/kafka/_metadata.c /src/console/kafka/_metadata.c
RUN cd /src && python setup.py build_ext --inplace

# -- the image: Java and the runtime libraries, the virtualenv, the code, a user that is not root ----
FROM python:3.11-slim-bookworm

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    MALLOC_ARENA_MAX=2 \
    PATH=/opt/venv/bin:$PATH \
    CONSOLE_VAR_DIR=/app/var \
    CONSOLE_AUDIT_ANCHOR_DIR=/var/lib/console/audit-anchors

# openjdk-17-jre-headless: PySpark's JVM for the pipeline (`java` on PATH is what spark-submit runs).
# libldap-2.5-0, libsasl2-2: what python-ldap links against at run time; libgssapi-krb5-2, libkrb5-3:
# what python gssapi does (the -dev packages stay behind).
RUN apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless libldap-2.5-0 libsasl2-2 \
       libgssapi-krb5-2 libkrb5-3 \
    && rm -rf /var/lib/apt/lists/* \
    && java -version

COPY --from=builder /opt/venv /opt/venv

# A fixed numeric uid/gid (10001), so volumes and an orchestrator's runAsNonRoot see the same user.
# var/ (generated keys when none are set, the beat schedule, the telemetry lake) and the audit anchors
# are volumes in docker-compose.yml; created here so a new named volume starts owned by that user.
RUN groupadd --system --gid 10001 console \
    && useradd --system --uid 10001 --gid console --home-dir /app --no-create-home console \
    && mkdir -p /app/var /var/lib/console/audit-anchors \
    && chown console:console /app/var /var/lib/console/audit-anchors \
    && chmod 0700 /var/lib/console/audit-anchors

WORKDIR /app
COPY . /app
COPY --from=builder /src/console/kafka/_metadata.*.so /app/console/kafka/
# Fail the build, not the first login, when a native library is missing (the extras' too).
ARG EXTRAS
RUN python -c "import confluent_kafka, psycopg, pyspark, re2, console.kafka._metadata" \
    && case ",$EXTRAS," in *,ldap,*) python -c "import django_auth_ldap, ldap" ;; esac \
    && case ",$EXTRAS," in *,kerberos,*) python -c "import gssapi" ;; esac

USER 10001:10001
EXPOSE 8000
# The web server's liveness (docker-compose.yml's web service checks readiness, /readyz, instead; the
# workers and beat override this with their own checks). Sent with the first ALLOWED_HOSTS name as its
# Host: Django answers 400 to a Host it does not serve, such as the container's own address.
HEALTHCHECK --interval=30s --timeout=10s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request as u; h = os.environ.get('ALLOWED_HOSTS', 'localhost').split(',')[0].strip().lstrip('.').replace('*', 'localhost') or 'localhost'; u.urlopen(u.Request('http://127.0.0.1:8000/healthz', headers={'Host': h}), timeout=5)"]
CMD ["gunicorn", "-c", "console/gunicorn_conf.py", "--bind", "0.0.0.0:8000", "console.wsgi"]
