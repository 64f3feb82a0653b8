"""Python calls read as Python reads them (feature 32): a receiver whose
first name an import binds is looked up module by module (`models.Manager`
through a package's `__init__.py`, `models.signals.post_save.connect`
through a submodule and a module-level variable `post_save =
ModelSignal()`), class by class (`models.DateField.register_lookup`, a class
attribute of a base); a bare name an import binds is what that module holds
or re-exports (`path` of `from pkg.urls import path`: the variable `path =
partial(…)`), or nothing the index holds when the module is outside the
repository (`from datetime import time`); a nested function or class is
seen only from the function around it; a receiver of no known type calling
a method of Python's builtin types (`params.extend()`) is not given a
method of that name by name. Checked on a small tree with the decoys the
rules by name took, and on the pinned django corpus against Jedi."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import duckdb
import pytest

from helpers import build
from test_go_calls import calls

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench" / "call_oracles"))

FILES = {
    "pkg/__init__.py": "",
    "pkg/db/__init__.py": "",
    "pkg/db/models/__init__.py": '''from pkg.db.models import signals
from pkg.db.models.fields import *  # NOQA
from pkg.db.models.fields import __all__ as fields_all
from pkg.db.models.manager import Manager
from pkg.db.models.query_utils import Q

__all__ = fields_all + ["Manager", "Q", "signals"]
''',
    "pkg/db/models/query_utils.py": '''from pkg.utils.tree import Node


def class_or_instance_method(a, b):
    return a


class RegisterLookupMixin:
    def get_class_lookups(cls):
        return {}

    def get_instance_lookups(self):
        return {}

    get_lookups = class_or_instance_method(get_class_lookups, get_instance_lookups)

    @classmethod
    def register_lookup(cls, lookup):
        return lookup


class Q(Node):
    pass
''',
    "pkg/utils/__init__.py": "",
    "pkg/utils/tree.py": '''class Node:
    @classmethod
    def create(cls, children=None):
        return cls()
''',
    "pkg/db/models/fields.py": '''from pkg.db.models.query_utils import RegisterLookupMixin

__all__ = ["Field", "DateField"]


class Field(RegisterLookupMixin):
    pass


class DateField(Field):
    pass
''',
    "pkg/db/models/manager.py": '''class BaseManager:
    @classmethod
    def from_queryset(cls, queryset_class):
        return cls


class QuerySet:
    pass


class Manager(BaseManager.from_queryset(QuerySet)):
    pass
''',
    "pkg/dispatch.py": '''class Signal:
    def connect(self, receiver):
        return receiver
''',
    "pkg/db/models/signals.py": '''from pkg.dispatch import Signal


class ModelSignal(Signal):
    def disconnect(self, receiver):
        return receiver


post_save = ModelSignal(use_caching=True)
''',
    "pkg/urls/__init__.py": '''from .conf import include, path
''',
    "pkg/urls/conf.py": '''from functools import partial


def include(arg):
    return arg


def _path(route, view, Pattern=None):
    return route


path = partial(_path, Pattern=None)
''',
    "pkg/measure.py": '''class Distance:
    def __init__(self, m=0):
        self.m = m


D = Distance
''',
    "pkg/lazy.py": '''def new_method_proxy(func):
    return func


class LazyObject:
    __getattr__ = new_method_proxy(getattr)


class AdminSite:
    def register(self, model):
        return model


class DefaultAdminSite(LazyObject):
    pass


site = DefaultAdminSite()
''',
    "pkg/mutable_list.py": '''class ListMixin:
    def extend(self, vals):
        return vals
''',
    "pkg/filters.py": '''def date(value):
    return value


def time(value):
    return value
''',
    "pkg/templatetags.py": '''class Library:
    def tag(self, name):
        return name


class Decoy:
    def tag(self, name):
        return None


register = Library()
''',
    # decoys: the rules by name found a `Manager`, a `create` and a `helper` here
    "app/__init__.py": "",
    "app/models.py": '''from pkg.db import models


class Manager(models.Field):
    pass


class Other:
    def create(self):
        return None

    def disconnect(self, receiver):
        return None

    def connect(self, receiver):
        return None
''',
    # a decoy base: the repository's only `TestCase`
    "pkg/testcases.py": '''class TestCase:
    pass
''',
    "app/tests.py": '''import unittest
from datetime import time

from pkg import lazy
from pkg.db import models
from pkg.db.models import Q, signals
from pkg.dispatch import Signal
from pkg.filters import date
from pkg.measure import D
from pkg.templatetags import register
from pkg.urls import path


def handler(sender):
    return sender


def helper():
    return 0


class Helper:
    pass


class UnitCase(unittest.TestCase):
    pass


def run():
    models.Manager()
    models.Manager.from_queryset(None)
    models.DateField.register_lookup(None)
    models.DateField.get_lookups()
    models.signals.post_save.connect(handler)
    signals.post_save.disconnect(handler)
    Q.create([])
    path("a/", handler)
    D(m=1)
    date(1)
    time(1)
    register.tag("x")
    lazy.site.register(None)
    params = []
    params.extend([1])


class Case:
    def test_one(self):
        def helper():
            return 1

        return helper()

    def test_two(self):
        class Helper:
            pass

        def helper():
            return 2

        Helper()
        return helper()

    def test_three(self):
        return helper()
''',
}

WANT = {
    # through the package's __init__.py, not app/models.py's `Manager`
    ("run", "models.Manager"): ("pkg/db/models/manager.py", "Manager"),
    # a class made by a call: its members do not show, the rules by name decide
    ("run", "models.Manager.from_queryset"): ("pkg/db/models/manager.py", "BaseManager.from_queryset"),
    # an inherited classmethod, through the class's bases
    ("run", "models.DateField.register_lookup"): ("pkg/db/models/query_utils.py",
                                                  "RegisterLookupMixin.register_lookup"),
    # a class attribute assigned in a base's body
    ("run", "models.DateField.get_lookups"): ("pkg/db/models/query_utils.py", "RegisterLookupMixin.get_lookups"),
    # a submodule, a module-level variable `post_save = ModelSignal(…)`, a base's method
    ("run", "models.signals.post_save.connect"): ("pkg/dispatch.py", "Signal.connect"),
    ("run", "signals.post_save.disconnect"): ("pkg/db/models/signals.py", "ModelSignal.disconnect"),
    # Q's base's classmethod, not the decoy's `create`
    ("run", "Q.create"): ("pkg/utils/tree.py", "Node.create"),
    # re-exported by pkg/urls/__init__.py: the variable `path = partial(…)`
    ("run", "path"): ("pkg/urls/conf.py", "path"),
    # `D = Distance`: the class it names
    ("run", "D"): ("pkg/measure.py", "Distance"),
    ("run", "date"): ("pkg/filters.py", "date"),
    # `from datetime import time`: the standard library's, not pkg/filters.py's
    ("run", "time"): (None, None),
    # a module-level variable of another file, `register = Library()`
    ("run", "register.tag"): ("pkg/templatetags.py", "Library.tag"),
    # a `__getattr__` in the MRO: members beyond those defined, the rules by name decide
    ("run", "lazy.site.register"): ("pkg/lazy.py", "AdminSite.register"),
    # a list: not the repository's only `extend`
    ("run", "params.extend"): (None, None),
    # the function around the call defines `helper`; another method's is out of sight
    ("Case.test_one", "helper"): ("app/tests.py", "Case.test_one.helper"),
    ("Case.test_two", "helper"): ("app/tests.py", "Case.test_two.helper"),
    ("Case.test_two", "Helper"): ("app/tests.py", "Case.test_two.Helper"),
    # the module's, not another method's nested `helper`
    ("Case.test_three", "helper"): ("app/tests.py", "helper"),
}


def write(repo: Path, files: dict[str, str]):
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)


def test_python_calls_follow_modules_classes_and_scopes(indexer, tmp_path):
    repo = tmp_path / "repo"
    write(repo, FILES)
    snap = build(indexer, repo, tmp_path / "out", "--no-embeddings")
    wrong = misplaced(snap.dir, "app/tests.py", WANT)
    assert not wrong, wrong
    bases = dict(duckdb.connect().execute(f"""
        SELECT e.src_symbol || ' ' || e.dst_name, s.path FROM read_parquet('{snap.dir}/edges.parquet') e
        LEFT JOIN read_parquet('{snap.dir}/symbols.parquet') s ON s.symbol_id = e.dst_symbol_id
        WHERE e.kind = 'extends'""").fetchall())
    # a base read through the package (not the file's own `Manager`), a base made by a call,
    # a base of a module outside the repository (not the repository's only `TestCase`)
    assert bases["Manager models.Field"] == "pkg/db/models/fields.py", bases
    assert bases["Manager BaseManager.from_queryset()"] is None, bases
    assert bases["UnitCase unittest.TestCase"] is None, bases


def misplaced(snap_dir: Path, src: str, want: dict) -> dict:
    """The calls of file `src`, by (calling symbol, name), whose target is not `want`'s."""
    got = {(sym, name): (path, qn) for s, sym, name, _l, _r, path, qn, _k in calls(snap_dir) if s == src}
    return {k: (got.get(k, "missing"), v) for k, v in want.items() if got.get(k) != v}


def jedi_draw(repo: Path, rows: list[tuple], seed: int, n: int) -> tuple[dict, dict, dict]:
    """A seeded draw of `n` of `rows` (as `corpus_calls` gives them), each judged by Jedi: every
    verdict, those Jedi could judge, and those it disagrees with."""
    import jedi_judge
    random.seed(seed)
    sample = random.sample(rows, n)
    judge = jedi_judge.Judge(str(repo))
    verdicts = {}
    for src, line, dst, p, qn, start, end in sample:
        verdicts[(src, line, dst, p, qn)] = jedi_judge.verdict(p, start, end, judge.target(src, line, dst), qn)
    judged = {k: v for k, v in verdicts.items() if v in ("agree", "disagree")}
    wrong = {k: v for k, v in judged.items() if v == "disagree"}
    return verdicts, judged, wrong


def corpus_calls(snap_dir: Path, where: str) -> list[tuple]:
    return duckdb.connect().execute(f"""
        SELECT e.src_path, e.line, e.dst_name, s.path, s.qualified_name, s.start_line, s.end_line
        FROM read_parquet('{snap_dir}/edges.parquet') e
        LEFT JOIN read_parquet('{snap_dir}/symbols.parquet') s ON s.symbol_id = e.dst_symbol_id
        WHERE e.kind = 'calls' AND e.src_path LIKE '%.py' AND ({where}) ORDER BY ALL""").fetchall()


@pytest.mark.corpus
def test_django_module_paths_agree_with_jedi(snapshots):
    snap = snapshots("django")
    # Stop 66's binary resolved none of the 46 `models.Manager()` (a `Manager` class of the tests
    # shadowed the package's) and none of the 690 `path(…)` (a variable, `path = partial(…)`).
    manager = corpus_calls(snap.dir, "e.dst_name = 'models.Manager'")
    assert len(manager) >= 40 and {r[3] for r in manager} == {"django/db/models/manager.py"}, manager
    path = corpus_calls(snap.dir, "e.dst_name = 'path'")
    assert sum(r[3] == "django/urls/conf.py" for r in path) >= 600, len(path)
    # It gave 211 untyped `x.extend(…)` calls GEOS's `ListMixin.extend`; Jedi puts 202 on `list`.
    extend = corpus_calls(snap.dir, "e.dst_name LIKE '%.extend' AND e.receiver_type IS NULL "
                                    "AND s.qualified_name = 'ListMixin.extend'")
    assert len(extend) <= 5, extend
    # Resolved calls through a dotted receiver whose first name is in lower case and no
    # `self`/`cls` (`models.X`, `signals.x.connect`, `router.m`, and locals and parameters the
    # rules by name decide): a seeded draw, judged by Jedi.
    rows = corpus_calls(snap.dir, "s.path IS NOT NULL AND e.receiver_type IS NULL "
                                  "AND regexp_matches(e.dst_name, '^[a-z_]\\w*(\\.\\w+)+$') "
                                  "AND NOT starts_with(e.dst_name, 'self.') AND NOT starts_with(e.dst_name, 'cls.')")
    verdicts, judged, wrong = jedi_draw(snap.repo, rows, 32, 60)
    assert len(judged) >= 35, verdicts
    assert len(wrong) <= 2, wrong
