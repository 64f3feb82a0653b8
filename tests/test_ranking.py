"""Rules of `search_code`'s ranking stage, on real code (Django 4.2, keyword mode).

Each case is a sentence of Django's reference docs and the definition it
documents. The case holds when the stage ranks that definition first among
its file's results, and the stage is what does it: with the stage switched
off (`CODE_INDEX_RANK=-<stage>`) another definition of that file comes first.
The measured effect of each stage on whole query sets is in
bench/results/ranking.md. The project-name rule is shown on a small tree of
its own (its real cases are semble's held-out bash-it queries)."""

from __future__ import annotations


import pytest

from helpers import build, search_code

pytestmark = pytest.mark.corpus

# (stage, query, file, definition ranked first with the stage, without it)
CASES = [
    ("compared", "Same as ModelBackend except that it doesn't reject inactive users",
     "django/contrib/auth/backends.py", "AllowAllUsersModelBackend", "ModelBackend"),
    ("compared", "Same as RemoteUserBackend except that it doesn't reject inactive users",
     "django/contrib/auth/backends.py", "AllowAllUsersRemoteUserBackend", "RemoteUserBackend"),
    ("compared", "An HttpResponse subclass that helps to create a JSON-encoded response.",
     "django/http/response.py", "JsonResponse", "HttpResponse"),
    ("private", "The invalid_choice message may contain %(value)s and the invalid_pk_value message may contain "
     "%(pk)s, which will be substituted by the appropriate values.",
     "django/forms/models.py", "ModelMultipleChoiceField", "ModelMultipleChoiceField._check_values"),
    ("head", "Returns an iterable of AppConfig instances.",
     "django/apps/registry.py", "Apps.get_app_configs", "Apps.populate"),
    ("head", "Returns a new OGRGeometry clone of this geometry object.",
     "django/contrib/gis/gdal/geometries.py", "OGRGeometry.clone", "OGRGeometry"),
    ("head", "Returns a warped version of this raster.",
     "django/contrib/gis/gdal/raster/source.py", "GDALRaster.warp", "GDALRaster.transform"),
]


def first_in_file(server_bin, snap, query: str, path: str, env: dict) -> str | None:
    for r in search_code(server_bin, snap.dir, query, "keyword", 20, env):
        if r["path"] == path:
            return r.get("symbol")
    return None


@pytest.mark.parametrize("stage,query,path,want,without", CASES, ids=[c[3] for c in CASES])
def test_a_stage_ranks_the_documented_definition_first(stage, query, path, want, without, django_snapshot, server_bin):
    assert first_in_file(server_bin, django_snapshot, query, path, {}) == want
    assert first_in_file(server_bin, django_snapshot, query, path, {"CODE_INDEX_RANK": f"-{stage}"}) == without


def test_the_project_name_in_a_query_names_no_file(indexer, server_bin, tmp_path):
    """A query that writes out the project's name ("acme-kit search
    functionality ...", asked of the snapshot named `acme-kit`) names the
    project, not the files named after it. Without the path stage the text
    ranks `lib/search.bash` first; the path stage without its `ownname` rule
    lets `acme-kit.completion.bash` overtake it by its name alone; with the
    rule the text's order stands. semble's held-out bash-it queries are the
    real case (bench/data/semble-heldout)."""
    tree = tmp_path / "acme-kit"
    for d in ("lib", "completion", "plugins"):
        (tree / d).mkdir(parents=True)
    for n in ("git", "node", "ruby", "python", "docker", "ssh"):
        (tree / f"plugins/{n}.bash").write_text(f"# The {n} plugin: aliases for {n}.\nalias {n}s='{n} status'\n")
    (tree / "lib/search.bash").write_text(
        "# Search functionality: finding the plugins and aliases that hold a term.\n"
        "_search_components() {\n  local term=\"$1\"\n"
        "  for f in plugins/*.bash; do grep -l \"$term\" \"$f\"; done\n}\n")
    (tree / "completion/acme-kit.completion.bash").write_text(
        "# Complete the commands.\n_complete_commands() {\n  COMPREPLY=(search enable disable plugins aliases)\n}\n")
    snap = build(indexer, tree, tmp_path / "out", "--no-embeddings", "--name", "acme-kit")

    def top(q: str, env: dict) -> str:
        return search_code(server_bin, snap.dir, q, "keyword", 5, env)[0]["path"]

    q = "acme-kit search functionality for finding plugins and aliases"
    assert top(q, {"CODE_INDEX_RANK": "-path"}) == "lib/search.bash"
    # (`namedword` off too: `search` alone names `lib/search.bash`, which would hide the effect)
    assert top(q, {"CODE_INDEX_RANK": "-ownname,-namedword"}) == "completion/acme-kit.completion.bash"
    assert top(q, {}) == "lib/search.bash"
    # a qualified name is a path, and its words count there (`namedword` off,
    # as above: with it, `search` names `lib/search.bash` first)
    assert top("acme.kit search functionality for finding plugins and aliases",
               {"CODE_INDEX_RANK": "-namedword"}) == "completion/acme-kit.completion.bash"


def test_a_lowercase_word_names_the_one_file_named_so(indexer, server_bin, tmp_path):
    """A word among the query's first three content words that is the exact
    name of one file, and of no other, names that file (`namedword`):
    "multipart form data parsing" puts `multipart.py` above a file whose text
    repeats "form data" more. Without the rule the text's order stands. A
    word that three files are named after (`context`) lifts none of them.
    semble's rack ("multipart form data parsing" -> `multipart.rb`) and
    rxswift ("zip operator ..." -> `Zip.swift`) queries are the real cases."""
    tree = tmp_path / "webkit"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg/multipart.py").write_text(
        '"""Bodies sent in parts."""\n\n\n'
        "def split_parts(body, boundary):\n"
        '    """Split a form body at each boundary line into its data, for parsing."""\n'
        "    return [p for p in body.split(boundary) if p.strip()]\n")
    (tree / "pkg/request.py").write_text(
        '"""Requests."""\n\n\n'
        "def read_body(request):\n"
        '    """Read the form data before parsing the form data: form fields."""\n'
        "    return decode(request.body)\n")
    for i in (1, 2, 3):
        (tree / f"ctx{i}").mkdir()
        (tree / f"ctx{i}/context.py").write_text(
            f'def handle(x):\n    """Context handling for part {i}."""\n    return x\n')
    snap = build(indexer, tree, tmp_path / "out", "--no-embeddings", "--name", "webkit")

    def ranked(q: str, env: dict) -> list[tuple[str, float]]:
        return [(r["path"], r["score"]) for r in search_code(server_bin, snap.dir, q, "keyword", 5, env)]

    q = "multipart form data parsing"
    assert ranked(q, {"CODE_INDEX_RANK": "-namedword"})[0][0] == "pkg/request.py"
    assert ranked(q, {})[0][0] == "pkg/multipart.py"
    # written capitalized, the word is the capitalized-name rule's, which the switch leaves on
    assert ranked("Multipart form data parsing", {"CODE_INDEX_RANK": "-namedword"})[0][0] == "pkg/multipart.py"
    # a name three files share names none: the same ranking with and without the rule
    q = "context handling for the part"
    assert ranked(q, {}) == ranked(q, {"CODE_INDEX_RANK": "-namedword"})
