# One image for every cube (docs/architecture.md section 8): `docker run IMAGE cube parser`, `... topics create`.
# docker-compose.yml builds it once as turbocubes:local and runs each cube in its own container.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src

# Dependencies first, from pyproject.toml alone, so a code change does not reinstall them
# (catboost, lxml, asyncpg, pillow... ship manylinux wheels: no compiler is needed).
COPY pyproject.toml README.md ./
RUN pip install $(python -c "import tomllib; print(' '.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))")

COPY shared ./shared
COPY cubes ./cubes
COPY demo ./demo
COPY schemas ./schemas
# schemas/ (the topic catalog and its JSON Schemas) is package data: the check proves it got in
RUN pip install --no-deps . \
 && cd / && python -c "from shared.contracts import catalog; assert catalog()" \
 && rm -rf /src

# Never root: the cubes only need the network and a writable working directory (embedded
# engines under ./var/ when no bus/store/cdn URL is given).
RUN useradd --system --create-home --home-dir /var/lib/turbocubes --uid 10001 turbocubes
USER turbocubes
WORKDIR /var/lib/turbocubes

# 9300: /healthz + /metrics of every cube; 8080: frontend; 8081: api
EXPOSE 9300 8080 8081
ENTRYPOINT ["turbocubes"]
CMD ["up"]
