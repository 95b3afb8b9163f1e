"""Read the declarations _cdefgen makes from smd.h into a small model that
a backend without a C parser of its own (ctypes) builds its types from.

The text is smd.h after the preprocessor, so the grammar is the header's
own, which is deliberately plain C99: enum and struct typedefs, opaque
struct typedefs, pointer typedefs, function prototypes, fields that are
scalars, pointers, fixed arrays or function pointers. Anything else is
refused with CdeclError naming the declaration, so that a header change
that needs more is noticed at import instead of producing wrong types.

Types are nested tuples:
``("name", "int")``, ``("ptr", T)``, ``("array", T, n)`` (n None for
``[]``), ``("func", RET, (PARAM, ...))``. ``const`` is dropped.

Like _cdefgen, this module imports nothing from the package.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from . import _cdefgen

CType = Tuple
_TOKEN = re.compile(r"\s*(?:([A-Za-z_]\w*)|(\d+\w*)|(\.\.\.)|(\S))")
_QUALIFIERS = {"const", "volatile", "restrict", "__restrict", "extern"}
# Multi-word base types of C, folded into one name.
_WORDS = {"unsigned", "signed", "long", "short", "int", "char"}


class CdeclError(ValueError):
    """A declaration this reader does not understand."""


@dataclass
class Declarations:
    """What a cdef text declares, by name."""
    enums: Dict[str, Dict[str, int]] = field(default_factory=dict)      # typedef name -> members
    structs: Dict[str, List[Tuple[str, CType]]] = field(default_factory=dict)  # typedef -> fields
    opaque: List[str] = field(default_factory=list)                     # struct typedefs, no body
    typedefs: Dict[str, CType] = field(default_factory=dict)            # other typedefs
    functions: Dict[str, CType] = field(default_factory=dict)           # name -> ("func", ...)
    constants: Dict[str, int] = field(default_factory=dict)             # enum members and #defines


def _tokens(text: str) -> List[str]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise CdeclError(f"cannot read {text[pos:pos + 40]!r}")
        out.append(m.group(0).strip())
        pos = m.end()
    return [t for t in out if t]


def _split_top(text: str, sep: str) -> List[str]:
    """`text` split at `sep` outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _base(tokens: List[str]) -> Tuple[str, List[str]]:
    """The base type name at the front of `tokens`, and the rest."""
    words: List[str] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t in _QUALIFIERS:
            i += 1
        elif t in ("struct", "enum"):
            words.append(t + " " + tokens[i + 1])
            i += 2
        elif t in _WORDS:
            words.append(t)
            i += 1
        elif not words and re.match(r"[A-Za-z_]\w*$", t):
            words.append(t)
            i += 1
            break
        else:
            break
    if not words:
        raise CdeclError(f"no type in {' '.join(tokens)!r}")
    name = " ".join(words)
    if name in ("unsigned", "signed"):
        name += " int"
    return name, tokens[i:]


def _declarator(tokens: List[str], base: CType) -> Tuple[Optional[str], CType]:
    """Apply a C declarator (``*name[4]``, ``(*fn)(args)``) to `base`."""
    stars = 0
    while tokens and (tokens[0] == "*" or tokens[0] in _QUALIFIERS):
        if tokens[0] == "*":
            stars += 1
        tokens = tokens[1:]
    for _ in range(stars):
        base = ("ptr", base)
    if tokens and tokens[0] == "(":  # (*name)(params): a function pointer
        close = tokens.index(")")
        inner, rest = tokens[1:close], tokens[close + 1:]
        if not rest or rest[0] != "(" or rest[-1] != ")":
            raise CdeclError(f"cannot read declarator {' '.join(tokens)!r}")
        func = ("func", base, _params(" ".join(rest[1:-1])))
        return _declarator(inner, func)
    name = None
    if tokens and re.match(r"[A-Za-z_]\w*$", tokens[0]):
        name, tokens = tokens[0], tokens[1:]
    dims: List[Optional[int]] = []
    while tokens and tokens[0] == "[":
        close = tokens.index("]")
        size = " ".join(tokens[1:close])
        dims.append(_number(size) if size else None)
        tokens = tokens[close + 1:]
    if tokens and tokens[0] == "(" and tokens[-1] == ")":  # name(params): a function
        base = ("func", base, _params(" ".join(tokens[1:-1])))
        tokens = []
    if tokens:
        raise CdeclError(f"cannot read declarator ending {' '.join(tokens)!r}")
    for n in reversed(dims):
        base = ("array", base, n)
    return name, base


def _number(text: str) -> int:
    value = _cdefgen._int_value(text)
    if value is None:
        raise CdeclError(f"{text!r} is not an integer constant")
    return value


def _params(text: str) -> Tuple[CType, ...]:
    text = text.strip()
    if text in ("", "void"):
        return ()
    out = []
    for part in _split_top(text, ","):
        if part == "...":
            raise CdeclError("variadic functions are not supported")
        out.append(parse_type_and_name(part)[1])
    return tuple(out)


def parse_type_and_name(text: str) -> Tuple[Optional[str], CType]:
    """``"const char *key"`` -> ("key", ("ptr", ("name", "char")))."""
    base, rest = _base(_tokens(text))
    return _declarator(rest, ("name", base))


@functools.lru_cache(maxsize=256)
def parse_type(text: str) -> CType:
    """A type as cffi-style calls name it: ``"int *"``, ``"size_t[]"``.
    Remembered per text (a CType is immutable): ffi.new parses its type on
    every call, a few hundred calls per training step of
    smd.torch.ShardedDataParallel."""
    name, ctype = parse_type_and_name(text)
    if name is not None:
        raise CdeclError(f"{text!r}: a type was expected, not a declaration of {name}")
    return ctype


_BODY = re.compile(r"^typedef\s+(struct|enum)\s+(\w+)?\s*\{(.*)\}\s*(\w+)$", re.DOTALL)
_OPAQUE = re.compile(r"^typedef\s+struct\s+(\w+)\s+(\w+)$")


def _enum_members(body: str, known: Dict[str, int]) -> Dict[str, int]:
    members, next_value = {}, 0
    for item in _split_top(body, ","):
        name, _, expr = item.partition("=")
        name = name.strip()
        value = next_value if not expr.strip() else _number(expr)
        members[name] = value
        known[name] = value
        next_value = value + 1
    return members


def read(cdef: str) -> Declarations:
    """The declarations of a text made by _cdefgen.generate()."""
    decls = Declarations()
    text = re.sub(r"/\*.*?\*/", " ", cdef, flags=re.DOTALL)
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    for stmt in _split_top(code, ";"):
        stmt = " ".join(stmt.split())
        try:
            _read_one(stmt, decls)
        except (CdeclError, ValueError, IndexError) as e:
            raise CdeclError(f"{stmt[:80]!r}: {e}") from e
    decls.constants.update(_cdefgen.constants_of(cdef))
    return decls


def _read_one(stmt: str, decls: Declarations) -> None:
    m = _BODY.match(stmt)
    if m:
        kind, _, body, name = m.groups()
        if kind == "enum":
            decls.enums[name] = _enum_members(body, decls.constants)
        else:
            fields = []
            for item in _split_top(body, ";"):
                fname, ftype = parse_type_and_name(item)
                if fname is None:
                    raise CdeclError(f"unnamed field {item!r}")
                fields.append((fname, ftype))
            decls.structs[name] = fields
        return
    m = _OPAQUE.match(stmt)
    if m:
        decls.opaque.append(m.group(2))
        return
    if stmt.startswith("typedef "):
        name, ctype = parse_type_and_name(stmt[len("typedef "):])
        if name is None:
            raise CdeclError("typedef without a name")
        decls.typedefs[name] = ctype
        return
    name, ctype = parse_type_and_name(stmt)
    if name is None or ctype[0] != "func":
        raise CdeclError("only functions and typedefs are declared at file scope")
    decls.functions[name] = ctype
