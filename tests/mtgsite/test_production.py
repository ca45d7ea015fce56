"""Production settings (issue 18): debug pages only when asked for, the Docker set-up `check --deploy` clean,
pages that look like the site when debug is off, static files served without debug."""
from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
import yaml
from django.template.loader import render_to_string

from tests.conftest import ROOT

COMPOSE = ROOT / "docker" / "compose.yml"
# What the settings read from the environment; a child process is started without any of them but those given.
SETTINGS_ENV = re.compile(r"^(DJANGO_|MTG_|POSTGRES_|REDIS_|SQLITE_|CELERY_|STATIC_ROOT$)")


def child_env(**given) -> dict:
    env = {k: v for k, v in os.environ.items() if not SETTINGS_ENV.match(k)}
    env.update(PYTHONPATH=str(ROOT), DJANGO_SETTINGS_MODULE="mtgsite.settings", **given)
    return env


def settings_in_child(*names, **given) -> subprocess.CompletedProcess:
    code = "from django.conf import settings; " + "; ".join(f"print('{n}=' + repr(settings.{n}))" for n in names)
    return subprocess.run([sys.executable, "-c", "import django; django.setup(); " + code], cwd=ROOT,
                          env=child_env(**given), capture_output=True, text=True, timeout=120)


def compose_environment() -> dict:
    """The web container's environment in docker/compose.yml, as `docker compose` fills it in: a value
    the user must give (``${NAME:?...}``) gets a test value, one with a default (``${NAME:-x}``) its default."""
    given = {"DJANGO_SECRET_KEY": secrets.token_urlsafe(50), "DJANGO_ALLOWED_HOSTS": "mtg.example.org",
             "POSTGRES_PASSWORD": secrets.token_urlsafe(16)}

    def fill(value) -> str:
        return re.sub(r"\$\{(\w+)(:[?-])([^}]*)\}", lambda m: given[m.group(1)] if m.group(2) == ":?" else m.group(3),
                      str(value))

    web = yaml.safe_load(COMPOSE.read_text())["services"]["web"]  # with the x-app anchor merged in
    return {k: fill(v) for k, v in web["environment"].items()}


def test_debug_is_off_unless_asked_for():
    off = settings_in_child("DEBUG")
    assert off.returncode == 0, off.stderr
    assert "DEBUG=False" in off.stdout
    on = settings_in_child("DEBUG", DJANGO_DEBUG="1")
    assert "DEBUG=True" in on.stdout, on.stderr


def test_make_run_asks_for_debug_and_says_so():
    out = subprocess.run(["make", "-n", "run"], cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=60)
    assert "export DJANGO_DEBUG=1" in out.stdout and "== debug: on (DJANGO_DEBUG=1, local use only)" in out.stdout
    off = subprocess.run(["make", "-n", "run"], cwd=ROOT, env=child_env(DJANGO_DEBUG="0"), capture_output=True,
                         text=True, timeout=60)
    assert "export DJANGO_DEBUG=0" in off.stdout


def test_the_docker_set_up_passes_check_deploy():
    env = compose_environment()
    assert env["DJANGO_SECURE"] == "1" and env["DJANGO_DEBUG"] == "0"
    out = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], cwd=ROOT,
                         env=child_env(**env), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no issues" in out.stdout
    secure = settings_in_child("SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_HSTS_SECONDS",
                               "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD", "SECURE_SSL_REDIRECT",
                               "SECURE_PROXY_SSL_HEADER", "X_FRAME_OPTIONS", **env)
    assert secure.returncode == 0, secure.stderr
    for expected in ("SESSION_COOKIE_SECURE=True", "CSRF_COOKIE_SECURE=True", "SECURE_HSTS_SECONDS=31536000",
                     "SECURE_HSTS_INCLUDE_SUBDOMAINS=True", "SECURE_HSTS_PRELOAD=True",
                     "SECURE_SSL_REDIRECT=True", "SECURE_PROXY_SSL_HEADER=('HTTP_X_FORWARDED_PROTO', 'https')",
                     "X_FRAME_OPTIONS='DENY'"):
        assert expected in secure.stdout, secure.stdout


def test_the_docker_set_up_has_no_default_secrets_and_publishes_no_database():
    compose = yaml.safe_load(COMPOSE.read_text())
    env = compose["x-app"]["environment"]
    for name in ("DJANGO_SECRET_KEY", "POSTGRES_PASSWORD", "DJANGO_ALLOWED_HOSTS"):
        assert re.fullmatch(r"\$\{%s:\?[^}]+\}" % name, env[name]), f"{name} must be given, not defaulted: {env[name]}"
    assert compose["services"]["postgres"]["environment"]["POSTGRES_PASSWORD"].startswith("${POSTGRES_PASSWORD:?")
    for service in ("postgres", "redis", "worker", "migrate"):
        assert "ports" not in compose["services"][service], f"{service} publishes a port"
    assert compose["networks"]["backend"]["internal"] is True
    assert all(p.startswith("127.0.0.1:") for p in compose["services"]["web"]["ports"])  # for a TLS proxy on the host
    assert "DJANGO_SECURE=1" in (ROOT / "docker" / "Dockerfile").read_text()


def test_secure_mode_refuses_to_start_without_a_secret_key():
    out = settings_in_child("DEBUG", DJANGO_SECURE="1")
    assert out.returncode != 0 and "DJANGO_SECURE=1 needs DJANGO_SECRET_KEY" in out.stderr


def test_a_local_run_keeps_one_secret_key(tmp_path):
    from mtgsite.settings import local_secret_key

    path = tmp_path / "var" / "secret_key"
    key = local_secret_key(path)
    assert len(key) >= 50 and local_secret_key(path) == key
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert not list(path.parent.glob(".secret_key.*"))  # nothing left aside


def test_pages_without_debug_look_like_the_site(client, settings, db):
    settings.DEBUG = False
    r = client.get("/no/such/page/")
    html = r.content.decode()
    assert r.status_code == 404 and 'id="error-page"' in html and "Manaforge" in html
    assert "URL patterns" not in html and "URLconf" not in html and "DEBUG = True" not in html
    assert "/static/css/site.css" in html
    server_error = render_to_string("500.html")  # rendered by Django without a request or context processors
    assert "Something went wrong" in server_error and "/static/css/site.css" in server_error


def test_the_debug_404_page_is_what_the_check_above_would_catch(client, settings, db):
    settings.DEBUG = True
    html = client.get("/no/such/page/").content.decode()
    assert "URL patterns" in html or "URLconf" in html


@pytest.fixture
def no_debug_in_served_processes(monkeypatch):
    monkeypatch.delenv("DJANGO_DEBUG", raising=False)
    monkeypatch.delenv("DJANGO_SECURE", raising=False)


def test_daphne_without_debug_serves_static_files_and_site_error_pages(no_debug_in_served_processes, daphne_server):
    with urllib.request.urlopen(f"{daphne_server}/static/css/site.css", timeout=30) as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/css")
        assert r.headers["X-Content-Type-Options"] == "nosniff"
    with urllib.request.urlopen(f"{daphne_server}/static/js/pod.js", timeout=30) as r:
        assert r.status == 200
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{daphne_server}/no/such/page/", timeout=30)
    html = missing.value.read().decode()
    assert missing.value.code == 404 and 'id="error-page"' in html and "URL patterns" not in html
