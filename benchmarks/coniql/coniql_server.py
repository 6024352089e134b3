"""Start Coniql's own application on a chosen loopback port (``make bench-peers``).

Run with the Python of Coniql's isolated environment (``.tools/peers/coniql``, from
``coniql-requirements.txt``), never ours. Coniql's ``coniql`` command always listens
on 0.0.0.0:8080; this builds the same app with ``coniql.app.create_app`` (no CORS,
no GraphiQL, default loop, as ``coniql`` runs) and serves it on ``HOST PORT``.
The CA settings (``EPICS_CA_*``) come from the environment.
"""

import sys

from aiohttp import web
from coniql import __version__
from coniql.app import configure_logger, create_app


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    configure_logger(debug=False)
    app = create_app(use_cors=False, debug=False, graphiql=False)
    print(f"coniql {__version__} serving on {host}:{port}", flush=True)
    web.run_app(app, host=host, port=port, print=lambda line: print(line, flush=True))


if __name__ == "__main__":
    main()
