"""The README and docs/ pages: every relative link points at a file (and heading) that exists, every backticked
repo path names a file or folder that exists (issue 26: docs that cannot drift), and the README stays a front
door (issue 17: at most about 150 lines, one docs page per product)."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"```.*?```", re.DOTALL)
TICKED = re.compile(r"`([^`\n]+)`")
GLOB = re.compile(r"[*?\[\]<>{}|=@%()]")
# Bare file names (no folder) are checked for these kinds only; a bare "results.json" is usually a run's output.
BARE = re.compile(r"^[\w.\-]+\.(py|md)$")
# Paths that exist only once something has run (the site's var/ folder, collectstatic's output).
RUN_TIME = ("var/", "staticfiles/")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.DOTALL)
    return {slug(m) for m in re.findall(r"^#+\s+(.+?)\s*$", text, re.MULTILINE)}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not checked here
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists() or (anchor and dest.suffix == ".md" and anchor not in anchors(dest)):
            broken.append(target)
    assert not broken, f"{page.name}: broken links {broken}"


def repo_top_level(root: Path) -> set[str]:
    """The first path segment of every file git tracks (falls back to the folder's entries outside git)."""
    done = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=False)
    if done.returncode == 0 and done.stdout:
        return {line.split("/", 1)[0] for line in done.stdout.splitlines()}
    return {p.name for p in root.iterdir()}


def repo_names(root: Path) -> set[str]:
    done = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=False)
    return {Path(line).name for line in done.stdout.splitlines()} or {p.name for p in root.rglob("*")}


def path_candidates(text: str, top: set[str]):
    """The backticked words of a markdown text (outside fenced blocks) that look like repo paths: a folder path
    whose first segment is a top-level entry of the repository (or ``..``), or a bare ``.py``/``.md`` name.
    Line numbers (``:12``), test ids (``::test``) and anchors are cut; globs, URLs and placeholders skipped."""
    for span in TICKED.findall(FENCE.sub("", text)):
        for word in span.split():
            word = word.strip(",;'\"").split("::")[0].split("#")[0]
            word = re.sub(r":\d+(-\d+)?$", "", word).rstrip(".:,")
            if not word or "://" in word or GLOB.search(word) or word.startswith(("/", "$", "~", "-")):
                continue
            if word.startswith(RUN_TIME):
                continue
            parts = [p for p in word.split("/") if p]
            if len(parts) >= 2 and (parts[0] in top or parts[0] == ".."):
                yield word
            elif len(parts) == 1 and "/" not in word and BARE.match(word):
                yield word


def missing_paths(page: Path, root: Path, top: set[str], names: set[str]) -> list[str]:
    """The backticked repo paths of ``page`` that exist neither from the repository root nor from the page."""
    missing = []
    for word in path_candidates(page.read_text(encoding="utf-8"), top):
        if "/" not in word:
            if word not in names:
                missing.append(word)
        elif not any((base / word).exists() for base in (root, page.parent)):
            # a path beside the repository (``../shared/data``, read from its root) is not one of the repo's
            if (root / word).resolve().is_relative_to(root.resolve()):
                missing.append(word)
    return missing


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_backticked_repo_paths_exist(page):
    missing = missing_paths(page, ROOT, repo_top_level(ROOT), repo_names(ROOT))
    assert not missing, f"{page.name}: paths that do not exist {missing}"


def test_the_path_check_fails_on_a_stale_path(tmp_path):
    (tmp_path / "gameplay" / "core").mkdir(parents=True)
    (tmp_path / "gameplay" / "core" / "engine.py").write_text("")
    page = tmp_path / "page.md"
    page.write_text("The engine (`gameplay/core/engine.py:28`), the search (`gameplay/core/search.py`), run\n"
                    "`python -m bench.pods --output var/pods.json`, a test `gameplay/core/engine.py::test_x`,\n"
                    "MIME `application/json`, data `MTG_DATA_DIR/game/decks.json`, glob `gameplay/*.py`,\n"
                    "a bare `engine.py` and a bare `gone.py`.\n```\npython gameplay/in_a_fence.py\n```\n")
    top = {"gameplay", "bench"}
    assert missing_paths(page, tmp_path, top, {"engine.py", "page.md"}) == ["gameplay/core/search.py", "gone.py"]
    page.write_text("`gameplay/core/engine.py` and `gameplay/core/`\n")
    assert missing_paths(page, tmp_path, top, {"engine.py"}) == []


def test_readme_is_a_front_door_with_one_page_per_product():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    for product in ("completion", "drafts", "pods", "games", "models", "operations"):
        assert f"(docs/{product}.md)" in readme, product
