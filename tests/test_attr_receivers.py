"""A Python call through an attribute of the instance (`self.client.get()`)
resolves by the type the class assigns to it (feature 17): in its
methods `self.x = Foo(…)`, `self.x: T = …`, `self.x = param` of an
annotated parameter, `cls.x = Foo(…)` in a classmethod; in its body
`x = Foo()` or `x: Foo` (not a descriptor's or a Django field's value,
which instances do not read). Assignments that disagree, or
whose value shows no type, leave the call to the rules by name; `None`
says nothing. Checked on a small tree whose every edge is known (with
decoys the rules by name pick), and on the pinned django corpus against
Jedi's inference."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import duckdb
import pytest

from helpers import build
from test_go_calls import calls

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench" / "call_oracles"))

FILES = {
    "app/__init__.py": "",
    "app/conn.py": '''class Conn:
    def send(self, b):
        return b

    def close(self):
        return None


class Other:
    def send(self, b):
        return 0

    def close(self):
        return 1


class Event:
    def is_set(self):
        return True


class Field:
    # A Django-style field: its model's metaclass replaces it.
    def contribute_to_class(self, cls, name):
        return None

    def send(self, b):
        return 0
''',
    "app/client.py": '''import threading

from app.conn import Conn, Field, Other


class Client:
    shared = None
    # class-level values instances read (not a field's, which is replaced;
    # a property reads as its getter's result)
    pool = Conn()
    typed: Conn
    name = Field()
    prop = property(lambda self: 1)

    def __init__(self, conn: Conn, url):
        self.conn = Conn()
        self.param = conn
        self.untyped = url
        self.later = None
        self.mixed = Conn()
        self.buf = dict()
        self.tup = Conn()
        self.count = Conn()
        self.nested = Conn()
        # the standard library's, not the repository's `Event`
        self.ev = threading.Event()

    def reset(self):
        self.later = Conn()
        self.mixed = Other()
        # `Conn()` and the annotation `Conn` name one type
        self.typed = Conn()
        # a tuple target, `+=` and a nested function: the type does not show
        self.tup, self.flag = Other(), 1
        self.count += 1

        def rebind():
            self.nested = Other()

        rebind()

    def run(self):
        self.conn.send(1)
        self.param.send(2)
        self.later.send(3)
        self.mixed.send(4)
        self.buf.send(5)
        self.untyped.close()
        self.tup.close()
        self.count.close()
        self.nested.close()
        self.ev.is_set()
        # assigned in a method further down
        self.late.close()

        def inner():
            return self.conn.send(6)

        return inner()

    @classmethod
    def setup(cls):
        cls.shared = Conn()

    def use_shared(self):
        self.pool.send(8)
        self.typed.close()
        self.name.send(9)
        self.prop.send(10)
        return self.shared.close()


    def set_late(self):
        self.late = Conn()


class Sub(Client):
    def go(self):
        return self.conn.send(7)


class Outer:
    x = Conn()

    class Inner:
        x = Other()

        def go(self):
            return self.x.close()
''',
}


def test_attribute_receivers_follow_the_assigned_type(indexer, tmp_path):
    repo = tmp_path / "repo"
    for rel, text in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    snap = build(indexer, repo, tmp_path / "out", "--no-embeddings")
    got = {(sym, name): (path, qn) for src, sym, name, _l, _r, path, qn, _k in calls(snap.dir)
           if src == "app/client.py"}
    want = {
        ("Client.run", "self.conn.send"): ("app/conn.py", "Conn.send"),
        # an annotated parameter's type; `None` first, then a `Conn`
        ("Client.run", "self.param.send"): ("app/conn.py", "Conn.send"),
        ("Client.run", "self.later.send"): ("app/conn.py", "Conn.send"),
        # a builtin's method is not the repository's `send`
        ("Client.run", "self.buf.send"): (None, None),
        # set in a classmethod through `cls`
        ("Client.use_shared", "self.shared.close"): ("app/conn.py", "Conn.close"),
        ("Client.use_shared", "self.pool.send"): ("app/conn.py", "Conn.send"),
        ("Client.use_shared", "self.typed.close"): ("app/conn.py", "Conn.close"),
        # a field's own method is not what the instance's value has
        ("Client.use_shared", "self.name.send"): (None, None),
        ("Client.run", "self.ev.is_set"): (None, None),
        ("Client.run", "self.late.close"): ("app/conn.py", "Conn.close"),
        ("Outer.Inner.go", "self.x.close"): ("app/conn.py", "Other.close"),
        # untyped: two `close`s, the rules by name take neither
        ("Client.run", "self.tup.close"): (None, None),
        ("Client.run", "self.count.close"): (None, None),
        ("Client.run", "self.nested.close"): (None, None),
    }
    wrong = {k: (got.get(k, "missing"), v) for k, v in want.items() if got.get(k) != v}
    assert not wrong, wrong
    con = duckdb.connect()
    recv = dict(con.execute(f"""
        SELECT src_symbol || ' ' || dst_name, receiver_type FROM read_parquet('{snap.dir}/edges.parquet')
        WHERE kind = 'calls' AND receiver_type IS NOT NULL AND src_path = 'app/client.py'""").fetchall())
    # Two types (`mixed`), an untyped parameter, a tuple target, `+=`, a
    # nested function (its call or its assignment) and a subclass's method
    # carry none.
    assert recv == {
        "Client.run self.conn.send": "Conn()",
        "Client.run self.param.send": "Conn",
        "Client.run self.later.send": "Conn()",
        "Client.run self.buf.send": "dict()",
        "Client.use_shared self.shared.close": "Conn()",
        "Client.use_shared self.pool.send": "Conn()",
        "Client.use_shared self.typed.close": "Conn",
        "Client.use_shared self.name.send": "Field()",
        "Client.run self.ev.is_set": "threading.Event()",
        "Client.run self.late.close": "Conn()",
        "Outer.Inner.go self.x.close": "Other()",
    }, recv


@pytest.mark.corpus
def test_django_attribute_receivers_agree_with_jedi(snapshots):
    import jedi_judge
    snap = snapshots("django")
    con = duckdb.connect()
    rows = con.execute(f"""
        SELECT e.src_path, e.line, e.dst_name, s.path, s.qualified_name, s.start_line, s.end_line, e.receiver_type
        FROM read_parquet('{snap.dir}/edges.parquet') e
        LEFT JOIN read_parquet('{snap.dir}/symbols.parquet') s ON s.symbol_id = e.dst_symbol_id
        WHERE e.kind = 'calls' AND e.receiver_type IS NOT NULL
          AND regexp_matches(e.dst_name, '^(self|cls)\\.\\w+\\.\\w+$')
        ORDER BY ALL""").fetchall()
    # Stop 60's binary types none of these; feature 17 types 1,600+.
    assert len(rows) >= 800, len(rows)
    # The types feature 17 reads (feature 18's `type[…]` and `self.factory()` forms are measured by
    # bench/call_oracles/py_jedi_check.py: Jedi reads a classmethod through a class attribute as the
    # base's, bench/results/calls.md).
    resolved = [r for r in rows if r[3] is not None and not r[7].startswith(("self.", "cls.", "type["))]
    assert len(resolved) >= 500, len(resolved)
    # Left unresolved although the type shows a class (`Conn()`, `threading.Event()`): the
    # method is outside the repository. (A function's result, `self.storage_class()`, shows no type;
    # a Django model field's value is a descriptor's, not followed: a miss, which Jedi's Django
    # stubs follow, not an error.)
    class_typed = [r for r in rows if r[3] is None
                   and re.fullmatch(r"([a-z_]\w*\.)*[A-Z]\w*\(\)", r[7]) and not r[7].startswith(("self.", "cls."))
                   and not re.search(r"(Field|ForeignKey)\(\)$", r[7])]
    assert len(class_typed) >= 40, len(class_typed)
    random.seed(17)
    sample = random.sample(resolved, 30) + random.sample(class_typed, 15)
    judge = jedi_judge.Judge(str(snap.repo))
    verdicts = {}
    for src, line, dst, path, qn, start, end, _ty in sample:
        jt = judge.target(src, line, dst)
        verdicts[(src, line, dst, path, qn)] = jedi_judge.verdict(path, start, end, jt, qn)
    judged = {k: v for k, v in verdicts.items() if v in ("agree", "disagree")}
    wrong = {k: v for k, v in judged.items() if v == "disagree"}
    assert len(judged) >= 35, verdicts
    # Jedi's bundled stubs are older than this Django in places (`MultiValueField.clean`), and
    # it reads `seek = property(…)` of `FileProxyMixin` as a method: allow two.
    assert len(wrong) <= 2, wrong
