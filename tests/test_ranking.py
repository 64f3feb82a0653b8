"""Rules of `search_code`'s ranking stage, on real code (Django 4.2, keyword mode).

Each case is a sentence of Django's reference docs and the definition it
documents. The case holds when the stage ranks that definition first among
its file's results, and the stage is what does it: with the stage switched
off (`CODE_INDEX_RANK=-<stage>`) another definition of that file comes first.
The measured effect of each stage on whole query sets is in
bench/results/ranking.md."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

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
    p = subprocess.run(
        [str(server_bin), "search-code", "--index", str(snap.dir), "--mode", "keyword", "--limit", "20", query],
        capture_output=True, text=True, env={**os.environ, **env}, timeout=300,
    )
    assert p.returncode == 0, p.stderr
    for r in json.loads(p.stdout)["results"]:
        if r["path"] == path:
            return r.get("symbol")
    return None


@pytest.mark.parametrize("stage,query,path,want,without", CASES, ids=[c[3] for c in CASES])
def test_a_stage_ranks_the_documented_definition_first(stage, query, path, want, without, django_snapshot, server_bin):
    assert first_in_file(server_bin, django_snapshot, query, path, {}) == want
    assert first_in_file(server_bin, django_snapshot, query, path, {"CODE_INDEX_RANK": f"-{stage}"}) == without
