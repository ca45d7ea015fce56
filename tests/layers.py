"""Which code is pure, and which tests test only pure code: derived from the source, not kept by hand (pure: reads
files, imports nothing of the project).

Pure code is every ``<app>/core`` package and the packages in ``PURE``: it imports no Django and nothing of the
shell (``tests/test_structure.py`` checks that). A *pure test* is one that cannot tell the two stacks apart, so
``make test`` runs it once, on the embedded stack (``tests/conftest.py`` leaves it out of the services run):

- its file imports no Django, Channels, Celery, DRF, database or Redis client, and of the project only pure code
  (a helper it imports from ``tests`` or ``bench`` is held to the same rule, through its own top-level imports);
- it uses no fixture of the database or the settings (``DB_FIXTURES``, through any fixture it depends on) and
  carries no ``django_db`` or ``services`` mark.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ("decks", "drafts", "gameplay", "ml", "mtgsite", "plumbing", "common")
PURE = ("drafts.bots", "decks.completion.models", "decks.embeddings.text", "decks.embeddings.doc2vec",
        "decks.embeddings.classifier", "common")
# what a pure test never imports: the stack's own libraries
STACK_LIBRARIES = ("django", "rest_framework", "channels", "channels_redis", "celery", "daphne", "psycopg", "redis",
                   "drf_spectacular", "pytest_django")
# pytest-django's fixtures that reach the database or the settings (a fixture built on one of them is in a test's
# fixture closure too)
DB_FIXTURES = frozenset({"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback",
                         "live_server", "client", "async_client", "admin_client", "admin_user", "django_user_model",
                         "django_username_field", "rf", "async_rf", "settings", "mailoutbox",
                         "django_capture_on_commit_callbacks", "django_assert_num_queries",
                         "django_assert_max_num_queries"})


def is_pure(module: str) -> bool:
    parts = module.split(".")
    return (len(parts) > 1 and parts[1] == "core") or any(module == p or module.startswith(p + ".") for p in PURE)


def _imports(tree: ast.AST, top_level_only: bool) -> list[str]:
    nodes = tree.body if top_level_only else ast.walk(tree)
    out = []
    for node in nodes:
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            base = node.module or ""
            out += [base] + [f"{base}.{alias.name}" for alias in node.names]
    return out


def _module_path(module: str) -> Path | None:
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:end])
        for path in (base.with_suffix(".py"), base / "__init__.py"):
            if path.is_file():
                return path
    return None


def _project_module(name: str) -> str:
    """The longest prefix of ``name`` that is a module of the project (``from x import y``: y may be a name)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        base = ROOT.joinpath(*parts[:end])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return candidate
    return name


@functools.lru_cache(maxsize=None)
def imports_only_pure_code(path: Path, top_level_only: bool = False) -> bool:
    """Whether the file at ``path`` imports nothing of the stack (see the module's docstring)."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    for name in _imports(tree, top_level_only):
        first = name.split(".")[0]
        if first in STACK_LIBRARIES:
            return False
        if first in APPS:
            if not is_pure(_project_module(name)):
                return False
        elif first in ("tests", "bench"):
            helper = _module_path(_project_module(name))
            if helper is not None and helper != Path(path) and not imports_only_pure_code(helper, True):
                return False
    return True


def is_pure_test(item) -> bool:
    """A collected pytest item that tests only pure code (see the module's docstring)."""
    if item.get_closest_marker("django_db") or item.get_closest_marker("services"):
        return False
    if DB_FIXTURES & set(getattr(item, "fixturenames", ())):
        return False
    path = Path(str(item.fspath))
    return path.suffix == ".py" and imports_only_pure_code(path)
