"""Judge Python calls through a local name (`x.m()`) with Jedi (pip `jedi`), stop 59.

Usage: python3 py_jedi_check.py OLD_SNAPSHOT_DIR NEW_SNAPSHOT_DIR [N]

Both snapshots are of the pinned django corpus (~/.cache/code-index/corpora/django). The calls of
NEW that carry `edges.receiver_type` (module-level calls included) are split by what changed
against OLD (new: resolved only now; changed: another target; lost: resolved only before; same-res:
the same target), N of each are drawn
(seeded), and Jedi's `goto(follow_imports=True)` on the method name gives the definition it infers.
A target agrees when Jedi names the same file and a line inside the definition, or the same dotted
name (Jedi answers from its bundled django-stubs, which name `django.forms.fields.Field.clean`); an
unresolved call agrees when every Jedi definition is outside the repository (stdlib, typeshed), not
a stub of django itself. Jedi's stubs are older than Django 4.2 in places (`MultiValueField.clean`,
`RenderableFormMixin.as_p`): read the disagreements before counting them as errors.
"""
import sys

from jedi_judge import Judge, compare, paired_calls


def main(where="n.receiver_type is not null"):
    """Draw and judge the calls of NEW matching `where` (SQL over `n`, NEW's edge), by what changed."""
    root = '~/.cache/code-index/corpora/django'
    old, new = sys.argv[1], sys.argv[2]
    N = int(sys.argv[3]) if len(sys.argv) > 3 else 60
    rows = paired_calls(old, new, where)

    compare(rows, ['new', 'changed', 'lost', 'same-res'], N, Judge(root), examples=8)

if __name__ == '__main__':
    main()
