"""The deployment's front (``deploy/front.conf``, the compose file's ``front``): nginx started
with that configuration (its upstream and port pointed at this test's gunicorn, started as the
Dockerfile does) buffers request bodies, so 12 clients sending a body one byte every 2 s hold
nginx connections, not gunicorn threads, and /health still answers through the front."""

import json
import os
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from tests.processes import free_port, stop_group, wait_for_health
from tests.test_deployment import REPO, gunicorn_as_the_dockerfile_runs_it

pytestmark = pytest.mark.slow
NGINX = "/usr/sbin/nginx"
SLOW_CLIENTS = 12


def front_config(folder: Path, upstream: int, port: int) -> Path:
    """nginx's main configuration around the compose file's server block, its upstream and
    listening port this test's, its files under ``folder``."""
    server = (REPO / "deploy" / "front.conf").read_text()
    assert "server web:8000;" in server and "listen 80;" in server
    server = server.replace("server web:8000;", f"server 127.0.0.1:{upstream};").replace(
        "listen 80;", f"listen 127.0.0.1:{port};")
    (folder / "front.conf").write_text(server)
    temps = "".join(f"{kind}_temp_path {folder / kind};\n"
                    for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    main = folder / "nginx.conf"
    main.write_text(f"""{"user root root;" if os.geteuid() == 0 else ""}
worker_processes 1;
daemon off;
pid {folder / "nginx.pid"};
error_log {folder / "error.log"};
events {{ worker_connections 256; }}
http {{
    access_log off;
    {temps}
    include {folder / "front.conf"};
}}
""")
    return main


def slow_client(port: int, stop: threading.Event, sent: list) -> None:
    """A POST whose 1,000-byte body comes one byte every 2 s, until ``stop``."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(b"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                           b"Content-Type: application/x-www-form-urlencoded\r\n"
                           b"Content-Length: 1000\r\n\r\n")
        while not stop.wait(2):
            connection.sendall(b"a")
            sent.append(1)


def test_slow_clients_hold_the_front_not_the_workers_and_health_answers(tmp_path):
    if not os.path.exists(NGINX):
        if os.environ.get("CI"):
            pytest.fail("nginx is missing: .ci/run installs it (apt-get install nginx-light)")
        pytest.skip("nginx is not installed (apt-get install nginx-light)")
    port = free_port()
    folder = tmp_path / "front"
    folder.mkdir()
    with gunicorn_as_the_dockerfile_runs_it(tmp_path) as (base, _, _):
        config = front_config(folder, int(base.rsplit(":", 1)[1]), port)
        front = subprocess.Popen([NGINX, "-c", str(config), "-p", str(folder)],
                                 start_new_session=True, stderr=subprocess.PIPE)
        stop, sent = threading.Event(), []
        clients = [threading.Thread(target=slow_client, args=(port, stop, sent), daemon=True)
                   for _ in range(SLOW_CLIENTS)]
        try:
            wait_for_health(f"http://127.0.0.1:{port}", front, 30,
                            lambda: (folder / "error.log").read_text())
            for client in clients:
                client.start()
            time.sleep(5)  # each slow client has sent a few bytes of its body by now
            answers = []
            for _ in range(5):
                started = time.monotonic()
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health",
                                            timeout=5) as answer:  # noqa: S310 - loopback
                    answers.append((answer.status, json.loads(answer.read())["status"],
                                    time.monotonic() - started))
                time.sleep(0.5)
            assert all(status == 200 and state == "ok" for status, state, _ in answers), answers
            assert len(sent) >= SLOW_CLIENTS  # they were sending all along
            print(f"/health through the front, with {SLOW_CLIENTS} slow clients: "
                  f"{', '.join(f'{s:.3f}' for _, _, s in answers)} s")
        finally:
            stop.set()
            for client in clients:
                client.join(10)
            stop_group(front, 10)
