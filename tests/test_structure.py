"""The project's layering, checked on its source (pure: reads files, imports nothing of the project).

- The import graph of the project's own modules (tests and migrations excluded) has no cycle.
- Pure code (every ``<app>/core`` package, and ``drafts.bots``, ``decks.completion.models``, the pure modules of
  ``decks.embeddings``, ``common``) imports no Django and nothing of the shell (models, views, tasks, ...): only other
  pure code.
- An import inside a function is allowed only with a ``# noqa: PLC0415`` marker that says why (ruff's
  import-outside-toplevel rule flags the unmarked ones; this test flags marks without a reason).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx
import pytest

from tests.layers import APPS, ROOT, is_pure

MARK = re.compile(r"#\s*noqa:\s*PLC0415\b(.*)$")


def project_modules(root: Path = ROOT) -> dict[str, Path]:
    mods = {}
    for app in APPS:
        for path in (root / app).rglob("*.py"):
            rel = path.relative_to(root)
            if "migrations" in rel.parts:
                continue
            name = ".".join(rel.with_suffix("").parts)
            mods[name.removesuffix(".__init__")] = path
    return mods


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module if is_package else module.rpartition(".")[0]
        parts = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join(parts + ([base] if base else []))
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


def import_graph(mods: dict[str, Path]) -> tuple[nx.DiGraph, list[tuple[str, int, str]]]:
    """-> (module graph, function-level imports as (module, line, source line))."""
    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph = nx.DiGraph()
    inner = []
    for module, path in mods.items():
        source = path.read_text()
        lines = source.splitlines()
        graph.add_node(module)
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in {resolve(t) for t in _targets(node, module, path.name == "__init__.py")} - {None, module}:
                graph.add_edge(module, target)
            if node.col_offset > 0:
                inner.append((module, node.lineno, lines[node.lineno - 1]))
    return graph, inner


@pytest.fixture(scope="module")
def graph():
    return import_graph(project_modules())


def test_the_import_graph_has_no_cycle(graph):
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph[0]) if len(c) > 1]
    assert not cycles, f"import cycles among the project's modules: {cycles}"


def test_pure_code_imports_no_django_and_no_shell(graph):
    g, _ = graph
    bad = []
    for module in g:
        if not is_pure(module):
            continue
        for target in g.successors(module):
            if not is_pure(target) and target not in APPS:
                bad.append((module, target))
        source = project_modules()[module].read_text()
        if re.search(r"^\s*(from|import)\s+(django|channels|celery|rest_framework)\b", source, re.M):
            bad.append((module, "django"))
    assert not bad, f"pure cores importing the shell or Django: {bad}"


GAME_LAYERS = ("engine", "search", "learning", "matches")  # gameplay.core's subpackages, lowest first


def game_layer(module: str) -> int | None:
    parts = module.split(".")
    return GAME_LAYERS.index(parts[2]) if parts[:2] == ["gameplay", "core"] and len(parts) > 2 else None


def test_the_game_core_layers_import_one_way(graph):
    """gameplay.core is engine -> search -> learning -> matches: a package imports only itself and those before it
    (the search is passed its learned models, never looks them up), and no module sits beside the packages."""
    g, _ = graph
    loose = [m for m in g if m.startswith("gameplay.core.") and m.split(".")[2] not in GAME_LAYERS]
    assert not loose, f"gameplay.core modules outside its subpackages: {loose}"
    up = [(a, b) for a, b in g.edges if game_layer(a) is not None and game_layer(b) is not None
          and game_layer(b) > game_layer(a)]
    assert not up, f"gameplay.core imports against the layers ({' -> '.join(GAME_LAYERS)}): {up}"


def test_every_function_level_import_says_why(graph):
    _, inner = graph
    bare = []
    for module, lineno, line in inner:
        match = MARK.search(line)
        reason = match.group(1).strip(" -—:;,") if match else ""
        if len(reason) < 8:
            bare.append(f"{module}:{lineno}: {line.strip()}")
    assert not bare, "function-level imports without '# noqa: PLC0415 <reason>':\n" + "\n".join(bare)


def test_a_planted_cycle_is_found(tmp_path):
    """The checker itself: two modules importing each other (one inside a function) form a cycle."""
    app = tmp_path / "decks"
    app.mkdir()
    (app / "__init__.py").write_text("")
    (app / "a.py").write_text("from decks import b\n")
    (app / "b.py").write_text("def f():\n    from decks.a import x  # noqa: PLC0415 planted\n")
    g, inner = import_graph(project_modules(tmp_path))
    assert [sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1] == [["decks.a", "decks.b"]]
    assert inner == [("decks.b", 2, "    from decks.a import x  # noqa: PLC0415 planted")]


def test_tests_mirror_the_code():
    """tests/<app>/core/ (and tests/common/) holds the tests of pure code: they use no Django (no import, no
    database)."""
    tests = ROOT / "tests"
    bad = []
    for folder in [tests / app / "core" for app in APPS] + [tests / "common"]:
        for path in sorted(folder.rglob("*.py")):
            source = path.read_text()
            if re.search(r"^\s*(from|import)\s+(django|rest_framework|channels)\b|django_db|\bclient\b", source, re.M):
                bad.append(str(path.relative_to(ROOT)))
    assert not bad, f"tests of pure code that use Django: {bad}"
    strays = sorted(p.name for p in tests.iterdir() if p.is_dir() and p.name not in (*APPS, "bench", "fixtures", "__pycache__"))
    assert not strays, f"test folders that mirror no app: {strays}"


# --- the apps' layers (issue 26) ---------------------------------------------------------------------------

# A module under the key imports nothing under any of the values. The project package (mtgsite: settings, urls,
# routing, celery, setup_site) is the roof: no app imports it; it reaches the apps through their AppConfigs. The
# plumbing is the floor below the apps: it imports none of them.
APPS_BELOW_THE_ROOF = ("decks", "drafts", "gameplay", "ml")
FORBIDDEN = {
    "ml": ("decks", "drafts", "gameplay", "mtgsite"),  # the registry: the apps register their kinds with it, never the reverse
    "decks": ("drafts", "gameplay", "mtgsite"),  # cards and decks: the base the other products build on (they plug in panels)
    "drafts": ("mtgsite",),
    "gameplay": ("mtgsite",),
    "plumbing": (*APPS_BELOW_THE_ROOF, "mtgsite"),  # what every app uses: it knows none of them
    "common": (*APPS_BELOW_THE_ROOF, "mtgsite", "plumbing"),  # pure helpers shared once: nothing of the site
}


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def forbidden_imports(g: nx.DiGraph) -> list[tuple[str, str]]:
    return sorted((module, target) for module, target in g.edges for package, banned in FORBIDDEN.items()
                  if _under(module, package) and any(_under(target, b) for b in banned))


def test_the_apps_import_down_their_layers(graph):
    bad = forbidden_imports(graph[0])
    assert not bad, (f"imports against the layers (no app imports the project package mtgsite, the plumbing no app, ml no "
                     f"app, decks no other product, common nothing): {bad}")


def test_a_planted_layer_break_is_found():
    g = nx.DiGraph([("ml.views", "decks.models"), ("decks.views", "gameplay.carddb"), ("decks.views", "plumbing.api"),
                    ("gameplay.api", "decks.models"), ("common.stats", "common.figures")])
    assert forbidden_imports(g) == [("decks.views", "gameplay.carddb"), ("ml.views", "decks.models")]


# Helpers the apps and the benches share: each is defined once, in the module that owns it.
ONCE = ("wilson", "sign_test", "new_figure", "figure_bytes", "sample_decks", "machine", "json_body", "errors_response",
        "progress", "free_port")


def definitions(root: Path = ROOT) -> dict[str, list[str]]:
    """Function name -> the modules (apps, common and bench; not tests) that define it at top level."""
    found: dict[str, list[str]] = {}
    for folder in (*APPS, "bench"):
        for path in sorted((root / folder).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.parse(path.read_text()).body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found.setdefault(node.name, []).append(str(path.relative_to(root)))
    return found


def test_shared_helpers_exist_once():
    found = definitions()
    copies = {name: found[name] for name in ONCE if len(found.get(name, [])) > 1}
    assert not copies, f"shared helpers defined more than once: {copies}"


def test_a_pure_test_is_told_from_one_that_touches_the_stack(tmp_path):
    """``make test`` runs the pure tests once (tests/conftest.py leaves them out of the services run): a test is pure
    only when its file imports nothing of the stack (directly or through a helper it imports) and it uses no database
    or settings fixture. Each planted fault below makes a pure test impure."""
    from types import SimpleNamespace

    from tests.layers import imports_only_pure_code, is_pure_test

    def item(source: str, fixtures=(), marks=()):
        path = tmp_path / f"test_{abs(hash((source, fixtures, marks)))}.py"
        path.write_text(source)
        return SimpleNamespace(fspath=path, fixturenames=list(fixtures),
                               get_closest_marker=lambda name: name if name in marks else None)

    pure = "import pytest\nfrom common.stats import wilson\nfrom gameplay.core.engine.adapter import Action\n"
    assert is_pure_test(item(pure, fixtures=("tmp_path", "monkeypatch")))
    assert not is_pure_test(item(pure + "from django.conf import settings\n"))
    assert not is_pure_test(item(pure + "def test_x():\n    from decks.models import Card  # noqa: PLC0415 - planted\n"))
    assert not is_pure_test(item(pure + "from gameplay.play import session\n"))
    assert not is_pure_test(item(pure, fixtures=("tmp_path", "db")))
    assert not is_pure_test(item(pure, fixtures=("settings",)))
    assert not is_pure_test(item(pure, marks=("django_db",)))
    assert not is_pure_test(item(pure, marks=("services",)))
    # a helper from tests/ is judged by its own imports: the catalogue fixtures reach the database
    assert imports_only_pure_code(ROOT / "tests" / "gameplay" / "conftest.py", True)
    assert not imports_only_pure_code(ROOT / "tests" / "decks" / "completion" / "conftest.py", True)


# --- settings read once (issue 37) ---------------------------------------------------------------------------

SETTING_WITH_A_DEFAULT = re.compile(r"getattr\(\s*settings\s*,[^,()]+,")


def settings_read_with_a_default(root: Path = ROOT) -> list[str]:
    """``getattr(settings, "X", default)`` outside mtgsite/settings.py: a second default beside the setting's own."""
    found = []
    for folder in APPS:
        for path in sorted((root / folder).rglob("*.py")):
            if path == root / "mtgsite" / "settings.py" or "migrations" in path.parts:
                continue
            for lineno, line in enumerate(path.read_text().splitlines(), 1):
                if SETTING_WITH_A_DEFAULT.search(line):
                    found.append(f"{path.relative_to(root)}:{lineno}")
    return found


def test_settings_are_read_once():
    """Every setting has its one default in mtgsite/settings.py; the code reads ``settings.X`` (at most two
    exceptions, for a setting a test or a tool may truly leave out)."""
    found = settings_read_with_a_default()
    assert len(found) <= 2, f"settings read with a default of their own (set it in mtgsite/settings.py): {found}"


def test_a_planted_setting_default_is_found(tmp_path):
    (tmp_path / "plumbing").mkdir()
    (tmp_path / "plumbing" / "x.py").write_text('a = settings.A\nb = getattr(settings, "B", 3)\n')
    assert settings_read_with_a_default(tmp_path) == ["plumbing/x.py:2"]


# --- the game core keeps no state (issue 37) ---------------------------------------------------------------------
# The models a search uses are built once by the shell (gameplay.models_in_use) and passed down; no module of
# gameplay.core remembers which model is in use, or anything else, between calls. Module-level state is: a
# lowercase name bound to a container or to a call (an object), a name a function rebinds (``global``), a
# module-level name a function changes (an item set or deleted, an attribute set, a mutating method called), and a
# memo (``functools.lru_cache``/``cache``). The few that stay are named here, each with why it may.

GAME_CORE = Path("gameplay") / "core"
ALLOWED_STATE = {
    # pure, bounded memos of immutable loaded files, keyed by (path, modification time): never "which one is in use"
    "gameplay.core.engine.decks._load": "the sample decks file, read once per version of the file (2 kept)",
    "gameplay.core.learning.value._cached": "a value model's weights, loaded once per file version (4 kept)",
    "gameplay.core.learning.network._cached": "a policy/value network's weights, loaded once per file version (4 kept)",
    # pools of workers, reused by later calls: resources, not models
    "gameplay.core.search.ensemble._pools": "the ensemble's thread pools, one per size",
    "gameplay.core.search.ensemble._pools_lock": "the lock of those pools",
    "gameplay.core.search.parallel._pools": "root parallelism's process pools, one per card data and size",
    "gameplay.core.search.parallel._pool_lock": "the lock of those pools",
    # a worker process's own engine (and progress queue), set by its pool's initializer: the only way a
    # ProcessPoolExecutor hands its workers what they build once
    "gameplay.core.search.parallel._W_ENGINE": "a root-parallel worker process's engine",
    "gameplay.core.search.parallel._W_QUEUE": "a root-parallel worker process's progress queue",
    "gameplay.core.matches.roundrobin._pool_engine": "a gauntlet worker process's engine",
    "gameplay.core.matches.selfplay._pool_engine": "a self-play worker process's engine",
}
MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "deque", "bytearray"}
MUTATORS = {"append", "extend", "insert", "remove", "pop", "popitem", "clear", "update", "setdefault", "add",
            "discard", "set", "put", "sort", "reverse"}
MEMOS = {"lru_cache", "cache"}
STATELESS_CALLS = {"getLogger", "compile", "frozenset", "tuple", "TypeVar", "namedtuple"}  # a logger, a regex, ...
SHELL_LIBRARIES = ("django", "celery", "channels", "rest_framework")


def _is_constant_name(name: str) -> bool:
    return name.lstrip("_").replace("_", "").isupper() or not name.strip("_0123456789")


def _mutable(value: ast.expr | None) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    return (isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute))
            and (value.func.id if isinstance(value.func, ast.Name) else value.func.attr) in MUTABLE_CALLS)


def _decorator_name(node: ast.expr) -> str:
    node = node.func if isinstance(node, ast.Call) else node
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def module_state(source: str, module: str) -> dict[str, str]:
    """``{module.name: what makes it state}`` of one module's source (see above)."""
    tree = ast.parse(source)
    found: dict[str, str] = {}
    top: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        value = getattr(node, "value", None)
        for target in targets:
            for name in [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]:
                top.add(name)
                if name.startswith("__") and name.endswith("__"):
                    continue
                if _mutable(value) and not _is_constant_name(name):
                    found[f"{module}.{name}"] = "a module-level container"
                elif (isinstance(value, ast.Call) and not _is_constant_name(name)
                      and _decorator_name(value) not in STATELESS_CALLS):
                    found[f"{module}.{name}"] = "a module-level object"
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            for name in node.names:
                found[f"{module}.{name}"] = "rebound by a function (global)"
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(_decorator_name(d) in MEMOS for d in node.decorator_list):
                found[f"{module}.{node.name}"] = "a memo (lru_cache)"
            for inner in ast.walk(node):
                base = None
                if isinstance(inner, (ast.Subscript, ast.Attribute)) and isinstance(inner.ctx, (ast.Store, ast.Del)):
                    base = inner.value
                elif (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
                      and inner.func.attr in MUTATORS):
                    base = inner.func.value
                if isinstance(base, ast.Name) and base.id in top:
                    found.setdefault(f"{module}.{base.id}", "changed by a function")
    return found


def game_core_state(root: Path = ROOT) -> dict[str, str]:
    found = {}
    for path in sorted((root / GAME_CORE).rglob("*.py")):
        module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        found.update(module_state(path.read_text(), module))
    return found


def game_core_shell_imports(root: Path = ROOT) -> list[str]:
    """Imports (anywhere in a module, a function's included) of the shell from gameplay.core: ``gameplay.*``
    outside ``gameplay.core``, Django, Celery, Channels, DRF."""
    bad = []
    for path in sorted((root / GAME_CORE).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and not getattr(node, "level", 0):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for name in names:
                    shell = ((name == "gameplay" or name.startswith("gameplay.")) and not _under(name, "gameplay.core")
                             or any(_under(name, lib) for lib in SHELL_LIBRARIES))
                    if shell:
                        bad.append(f"{path.relative_to(root)}:{node.lineno}: {name}")
    return bad


def test_the_game_core_keeps_no_module_state():
    """No module of gameplay.core holds state between calls (which model is in use, a cache, a switch) but the
    memos of loaded files and the worker pools ``ALLOWED_STATE`` names; it imports nothing of the shell."""
    found = game_core_state()
    extra = {name: why for name, why in found.items() if name not in ALLOWED_STATE}
    assert not extra, ("module-level state in gameplay.core (the shell builds what a search uses and passes it down; "
                       f"a memo of loaded files or a pool may be named in ALLOWED_STATE): {extra}")
    stale = sorted(set(ALLOWED_STATE) - set(found))
    assert not stale, f"ALLOWED_STATE names state that is gone (remove it): {stale}"
    shell = game_core_shell_imports()
    assert not shell, f"gameplay.core imports the shell: {shell}"


def test_planted_game_core_state_is_found(tmp_path):
    """The checker itself: each kind of state planted in a core module is found, a constant is not, and an import
    of the shell (in a function too) is found."""
    core = tmp_path / GAME_CORE / "learning"
    core.mkdir(parents=True)
    (core / "planted.py").write_text(
        "import functools\nimport logging\nimport threading\n"
        "LEVELS = {'a': 1}\nWORDS = ('x', 'y')\n_NAMES = frozenset({'a'})\n"
        "_value = None\n_network = Resolver()\n_seen: dict = {}\nREGISTRY = {}\n_lock = threading.Lock()\n"
        "log = logging.getLogger(__name__)\n\n"
        "def set_model(fn):\n    global _value\n    _value = fn\n\n"
        "def register(name, fn):\n    REGISTRY[name] = fn\n\n"
        "@functools.lru_cache(maxsize=None)\ndef load(path):\n    return path\n\n"
        "def shell():\n    from gameplay.models_in_use import search_models  # noqa: PLC0415 planted\n"
        "    return search_models()\n")
    (core / "clean.py").write_text("from gameplay.core.search.evaluation import SearchModels\n"
                                   "NO_MODELS = SearchModels()\n__all__ = ['NO_MODELS']\n")
    found = game_core_state(tmp_path)
    m = "gameplay.core.learning.planted"
    assert found == {f"{m}._value": "rebound by a function (global)", f"{m}._network": "a module-level object",
                     f"{m}._seen": "a module-level container", f"{m}.REGISTRY": "changed by a function",
                     f"{m}._lock": "a module-level object", f"{m}.load": "a memo (lru_cache)"}
    assert game_core_shell_imports(tmp_path) == ["gameplay/core/learning/planted.py:26: gameplay.models_in_use"]
