"""Serialise a CPython AST into graphmend's tree model (the union over
3.8–3.13 described by src/core/ast/nodes.def) as a token stream that
``gm_dump --replay`` rebuilds with Tree::add and dumps.

This checks the dumper and repr() on its own, independently of the parser:
for every file, CPython version X parses it, this module serialises X's tree,
gm_dump --replay --minor X prints it, and the result must equal X's own
ast.dump(..., include_attributes=True).

Runs under CPython 3.8–3.13 (no dependencies).

Token grammar (whitespace separated):
  node     := '(' Kind lineno col end_lineno end_col field* ')'
  field    := node | '~' (None) | '[' field* ']' | 'I'hex (identifier/string,
              UTF-8 with surrogatepass) | 'i'int | 'o'OpName
              | 'c' constant
  constant := 'N' | 'T' | 'F' | 'E' | 'i'digits | 'f'repr | 'j'repr
              | 's'hex | 'b'hex
"""

from __future__ import annotations

import ast
import os
import re
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
NODES_DEF = os.path.join(_HERE, "..", "..", "src", "core", "ast", "nodes.def")


def load_nodes_def(path=NODES_DEF):
    """{Kind: [(field, FieldKind), ...]} in nodes.def order."""
    fields = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*GM_NODE\((\w+),", line)
            if m:
                fields.setdefault(m.group(1), [])
                continue
            m = re.match(r"\s*GM_FIELD\((\w+),\s*(\w+),\s*(\w+),", line)
            if m:
                fields[m.group(1)].append((m.group(2), m.group(3)))
    return fields


FIELDS = load_nodes_def()
_LIST_KINDS = {"List", "OptList", "IdentList", "OpList"}


def _hex(s):
    if isinstance(s, str):
        s = s.encode("utf-8", "surrogatepass")
    return s.hex() or "-"


def _constant(v, out):
    if v is None:
        out.append("cN")
    elif v is True:
        out.append("cT")
    elif v is False:
        out.append("cF")
    elif v is Ellipsis:
        out.append("cE")
    elif isinstance(v, int):
        if hasattr(sys, "set_int_max_str_digits"):
            sys.set_int_max_str_digits(0)
        out.append("ci" + str(v))
    elif isinstance(v, float):
        out.append("cf" + repr(v))
    elif isinstance(v, complex):
        out.append("cj" + repr(v.imag))
    elif isinstance(v, str):
        out.append("cs" + _hex(v))
    elif isinstance(v, bytes):
        out.append("cb" + _hex(v))
    else:
        raise TypeError("constant of type %s" % type(v).__name__)


def _pos(node):
    return [str(getattr(node, a, None) or 0) for a in ("lineno", "col_offset", "end_lineno", "end_col_offset")]


def serialise(tree):
    """Iterative (deep trees exist)."""
    out = []
    # work items: ('node', node) | ('tok', text) | ('value', value, kind)
    work = [("value", tree, "Node")]
    while work:
        item = work.pop()
        if item[0] == "tok":
            out.append(item[1])
            continue
        _, v, kind = item
        if kind == "Constant":
            _constant(v, out)
            continue
        if v is None:
            out.append("~")
            continue
        if kind in _LIST_KINDS:
            out.append("[")
            work.append(("tok", "]"))
            for x in reversed(v):
                work.append(("value", x, {"IdentList": "Ident", "OpList": "Op"}.get(kind, "Node")))
            continue
        if kind in ("Ident", "OptIdent", "OptString"):
            out.append("I" + _hex(v))
            continue
        if kind == "Int":
            out.append("i%d" % v)
            continue
        if kind == "Op":
            out.append("o" + type(v).__name__)
            continue
        # a node
        name = type(v).__name__
        if name == "Index":  # 3.8: unwrap to the 3.9+ tree
            work.append(("value", v.value, "Node"))
            continue
        if name == "ExtSlice":  # 3.8: a Tuple of its dims
            elts = [d.value if type(d).__name__ == "Index" else d for d in v.dims]
            out.extend(["(Tuple", "0", "0", "0", "0", "["])
            work.append(("tok", ")"))
            work.append(("tok", "oLoad"))
            work.append(("tok", "]"))
            for x in reversed(elts):
                work.append(("value", x, "Node"))
            continue
        if name in ("Suite", "Param", "AugLoad", "AugStore"):
            raise TypeError("unexpected node %s" % name)
        spec = FIELDS[name]
        out.append("(" + name)
        out.extend(_pos(v))
        work.append(("tok", ")"))
        for fname, fkind in reversed(spec):
            if hasattr(v, fname):
                fv = getattr(v, fname)
            else:
                fv = [] if fkind in _LIST_KINDS else None
            work.append(("value", fv, fkind))
    return " ".join(out)


if __name__ == "__main__":
    for p in sys.argv[1:]:
        with open(p, "rb") as f:
            print(serialise(ast.parse(f.read())))
