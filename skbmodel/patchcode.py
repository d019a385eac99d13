"""What a patch changes in the code, not in its lines: the net change of each function it touches.

A unified diff shows lines; a reviewer reads code.  For each hunk the old side (context and removed lines, in
order) and the new side (context and added lines) are parsed with tree-sitter's C grammar, which builds a tree
from a fragment that starts or ends inside a function and marks what it could not parse instead of failing.
From each side's tree come its *facts*: the functions it calls (``call:kmem_cache_free_bulk``), the names it
uses (``name:__GFP_ZERO``, identifiers and fields, so a flag passed or a field read counts), the macros it
defines with their values (``define:VETH_XDP_BATCH=16``), the left sides it assigns (``assign:skb->next``) and
the locks it takes (a call whose name says it).  Comments and string literals are nodes of their own and give
no fact, so a comment-only change has no net change, and a call that was only reflowed appears on both sides
and cancels.

The net change of a function is the multiset of its new facts minus its old ones, and the reverse, summed over
every hunk of every mail in apply order (a series that adds a call in mail 4 and removes it in mail 6 changes
nothing).  The function is the definition that encloses the changed line in the parsed side; a hunk that starts
inside a body (no enclosing definition in the fragment) takes git's hunk heading (``@@ ... @@ static int
f(...)``), and a ``#define`` outside any body is file scope.  A function the patch defines (its definition is
on the new side only) is a helper: its body is a change where it is called, so a caller's added call to it
brings the helper's facts along (one level: helpers of helpers are expanded in turn).

Reference: tree-sitter C grammar (github.com/tree-sitter/tree-sitter-c), node types ``call_expression``,
``function_definition``, ``preproc_def``, ``comment``, ``string_literal``.
"""
from __future__ import annotations

import dataclasses
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

import tree_sitter
import tree_sitter_c

#: the file scope of a file: a macro or a declaration outside every function body
FILE_SCOPE = "(file scope)"

_LOCK = re.compile(r"^(?:spin|raw_spin|read|write)_(?:un)?lock|^local_(?:un)?lock|^local_bh_|^local_irq_|^rcu_read_"
                   r"|^preempt_|^mutex_(?:un)?lock|_lock_bh$|_unlock_bh$")
_C_FILE = re.compile(r"\.(?:c|h)$")


def is_code(path: str) -> bool:
    """A C source or header (what the parser reads; documentation, scripts and selftests' shell are not)."""
    return bool(_C_FILE.search(path))


@lru_cache(maxsize=1)
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_c.language()))


@dataclasses.dataclass(frozen=True)
class Side:
    """One side of a hunk, parsed: each fact with the function it stands in and the row of the side's lines
    that holds it, and the rows that start a function definition (``{row: name}``)."""
    facts: tuple[tuple[str, str, int], ...]   # (function, fact, row)
    headers: Mapping[int, str]


def _text(node) -> str:
    return node.text.decode("utf-8", errors="replace")


def _callee(node) -> str | None:
    f = node.child_by_field_name("function")
    if f is None:
        return None
    if f.type == "identifier":
        return _text(f)
    if f.type == "field_expression":  # ops->ndo_xdp_xmit(...): the field called
        fld = f.child_by_field_name("field")
        return _text(fld) if fld is not None else None
    return None


def _normal(text: str) -> str:
    """Code text without white space, so that a reflow changes nothing."""
    return re.sub(r"\s+", "", text)


#: a definition's first line in kernel style: at column 0, a return type, the name and its open parenthesis; not
#: a statement keyword, and not a declaration (a line that closes with ``;``)
_HEADER = re.compile(r"^(?!(?:typedef|return|if|else|for|while|switch|do|goto|case|default|sizeof)\b)"
                     r"(?:[A-Za-z_][\w \t]*?[\s\*]+)?([A-Za-z_]\w*)\s*\(")


def scopes(lines: Sequence[str], heading: str) -> tuple[list[str], dict[int, str]]:
    """The function each row stands in, and the rows that start a definition.  Kernel style puts a
    definition's first line and its closing brace at column 0: a row is in the last definition started at or
    before it, and after a ``}`` at column 0 in :data:`FILE_SCOPE`; rows before any start are in ``heading``'s
    function (git's hunk heading), where the hunk began."""
    fn, out, headers = heading, [], {}
    for row, line in enumerate(lines):
        m = _HEADER.match(line)
        # not a declaration (;), not an initialised definition (DEFINE_PER_CPU(...) = {), not a macro's name
        if (m and not line.rstrip().endswith(";") and not re.search(r"\)\s*=", line)
                and not m.group(1).isupper()):
            fn = m.group(1)
            headers[row] = fn
        out.append(fn)
        if line.startswith("}"):
            fn = FILE_SCOPE
    return out, headers


_COMMENT_BODY = re.compile(r"^\s*\*(?:\s|$)")


def _cut_comments(lines: Sequence[str]) -> list[str]:
    """``lines`` with the block comment a fragment starts or ends inside blanked (rows kept): a hunk that begins
    within a comment (a ``*/`` before any ``/*``, or kernel-style `` * text`` lines first) or ends within one
    (a ``/*`` never closed) would otherwise be parsed as code."""
    out = list(lines)
    opened = next((i for i, line in enumerate(out) if "/*" in line), None)
    closed = next((i for i, line in enumerate(out) if "*/" in line), None)
    first_closes = closed is not None and (
        opened is None or closed < opened
        or (closed == opened and out[closed].index("*/") < out[closed].index("/*")))
    if first_closes:
        out[:closed] = [""] * closed
        out[closed] = out[closed].split("*/", 1)[1]
    else:
        i = 0
        while i < len(out) and _COMMENT_BODY.match(out[i]):
            out[i] = ""
            i += 1
    text = "\n".join(out)
    last_open, last_close = text.rfind("/*"), text.rfind("*/")
    if last_open > last_close:  # a comment the fragment does not close
        row = text.count("\n", 0, last_open)
        out[row] = out[row][:out[row].rfind("/*")]
        out[row + 1:] = [""] * (len(out) - row - 1)
    return out


def parse_side(lines: Sequence[str], heading: str) -> Side:
    """The facts of one side of a hunk (``lines`` without their diff prefix), each in the function its row
    stands in (:func:`scopes`), and :data:`FILE_SCOPE` for a preprocessor definition."""
    lines = _cut_comments(lines)
    src = "\n".join(lines).encode("utf-8", errors="replace")
    tree = _parser().parse(src)
    row_fn, headers = scopes(lines, heading)
    facts: list[tuple[str, str, int]] = []

    def add(node, fact: str, where: str | None = None) -> None:
        row = node.start_point[0]
        facts.append((where or (row_fn[row] if row < len(row_fn) else heading), fact, row))

    # an explicit stack: a 5 MB mail's hunks must not recurse as deep as their nesting
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        t = node.type
        if t in ("comment", "string_literal", "char_literal", "system_lib_string", "concatenated_string"):
            continue
        if t == "storage_class_specifier":  # static, inline, extern: where the compiler may put the code
            add(node, f"spec:{_text(node)}")
        elif t in ("preproc_def", "preproc_function_def"):
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is not None:
                add(node, f"define:{_text(name)}={_normal(_text(value)) if value is not None else ''}", FILE_SCOPE)
            continue
        elif t == "call_expression":
            name = _callee(node)
            if name:
                add(node, f"call:{name}")
                if _LOCK.search(name):
                    add(node, f"lock:{name}")
        elif t == "assignment_expression":
            left = node.child_by_field_name("left")
            if left is not None:
                add(node, f"assign:{_normal(_text(left))}")
        elif t in ("identifier", "field_identifier", "type_identifier") and not _is_callee(node):
            add(node, f"name:{_text(node)}")
        for child in reversed(node.children):
            stack.append(child)
    for row, name in headers.items():
        facts.append((name, f"define:{name}", row))
    return Side(tuple(facts), headers)


def _is_callee(node) -> bool:
    p = node.parent
    return p is not None and p.type == "call_expression" and p.child_by_field_name("function") == node


_HEAD_NAME = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def heading_function(heading: str) -> str:
    """The function git's hunk heading names (``static int f(struct x *a)`` -> ``f``; a struct or a label
    heading -> the heading itself), or :data:`FILE_SCOPE` for none."""
    heading = (heading or "").strip()
    if not heading:
        return FILE_SCOPE
    m = None
    for m in _HEAD_NAME.finditer(heading):
        break
    return m.group(1) if m else heading


@dataclasses.dataclass
class FunctionChange:
    """The net change of one function of one file over the whole patch."""
    file: str
    function: str
    added: Counter = dataclasses.field(default_factory=Counter)
    removed: Counter = dataclasses.field(default_factory=Counter)
    lines: dict = dataclasses.field(default_factory=dict)   # fact -> the changed line that holds it
    defined: bool = False        # the patch defines this function (a helper, priced where it is called)
    touched: bool = False        # some hunk changed a line of it
    hunks: list = dataclasses.field(default_factory=list)   # (mail, hunk index) that touched it

    @property
    def net(self) -> bool:
        return bool(self.added or self.removed)

    def names(self, side: str, kind: str) -> set[str]:
        """The facts of ``kind`` (``call``, ``name``, ``define``, ...) net ``added`` or ``removed``."""
        facts = self.added if side == "added" else self.removed
        return {f.split(":", 1)[1] for f in facts if f.startswith(kind + ":")}

    def macros(self) -> dict[str, tuple[str | None, str | None]]:
        """Each macro whose value the patch changes or introduces or removes: ``{name: (before, after)}``."""
        out: dict[str, list] = {}
        for side, facts in (("before", self.removed), ("after", self.added)):
            for f in facts:
                if f.startswith("define:") and "=" in f:
                    name, value = f[len("define:"):].split("=", 1)
                    out.setdefault(name, [None, None])[0 if side == "before" else 1] = value
        return {k: (v[0], v[1]) for k, v in out.items()}



def _side_rows(rows: Sequence[tuple[str, str]], side: str) -> tuple[list[str], set[int]]:
    """One side's lines (context and ``side``'s lines, in order) and the row numbers of the changed ones."""
    lines, changed = [], set()
    for kind, text in rows:
        if kind == " " or kind == side:
            if kind == side:
                changed.add(len(lines))
            lines.append(text)
    return lines, changed


def net_changes(hunks: Iterable, callees: Mapping[str, Sequence[str]] | None = None
                ) -> dict[tuple[str, str], FunctionChange]:
    """``{(file, function): FunctionChange}`` over ``hunks`` in apply order.  Each hunk needs ``file``,
    ``function`` (git's heading) and ``rows``: ``(kind, text)`` with kind ``" "``, ``"-"`` or ``"+"`` in the
    hunk's order.  Files that are not C (documentation, scripts, selftests' shell) give no facts: the hunk
    table lists them apart."""
    changes: dict[tuple[str, str], FunctionChange] = {}

    started: dict[str, set[str]] = defaultdict(set)
    ended: dict[str, set[str]] = defaultdict(set)

    def change(file: str, fn: str) -> FunctionChange:
        return changes.setdefault((file, fn), FunctionChange(file, fn))

    for index, h in enumerate(hunks):
        if h.file and not is_code(h.file):
            continue
        heading = heading_function(h.function)
        old_lines, old_changed = _side_rows(h.rows, "-")
        new_lines, new_changed = _side_rows(h.rows, "+")
        old, new = parse_side(old_lines, heading), parse_side(new_lines, heading)
        count: Counter = Counter()
        line_of: dict[tuple[str, str], str] = {}
        for side, lines, sign in ((new, new_lines, 1), (old, old_lines, -1)):
            for fn, fact, row in side.facts:
                count[(fn, fact)] += sign
                line_of.setdefault((fn, fact), lines[row].strip() if row < len(lines) else "")
        for (fn, fact), d in count.items():
            if d == 0:
                continue
            ch = change(h.file, fn)
            # the series' net: a fact one mail adds and a later one removes cancels
            gain, loss = (ch.added, ch.removed) if d > 0 else (ch.removed, ch.added)
            take = min(abs(d), loss[fact])
            loss[fact] -= take
            gain[fact] += abs(d) - take
            ch.added, ch.removed = +ch.added, +ch.removed
            ch.lines.setdefault(fact, line_of[(fn, fact)])
        for side, changed in ((old, old_changed), (new, new_changed)):
            for fn in _touched(side, changed, heading):
                ch = change(h.file, fn)
                ch.touched = True
                ch.hunks.append(index)
        for fn in {name for row, name in new.headers.items() if row in new_changed}:
            started[h.file].add(fn)
        for fn in {name for row, name in old.headers.items() if row in old_changed}:
            ended[h.file].add(fn)
    # a definition whose first line the patch adds, and whose name no removed first line had, is new
    for file, names in started.items():
        for fn in names - ended[file]:
            if (file, fn) in changes:
                changes[(file, fn)].defined = True
    _expand_helpers(changes)
    _expand_callees(changes, callees or {})
    return changes


def _expand_callees(changes: Mapping[tuple[str, str], FunctionChange], callees: Mapping[str, Sequence[str]]) -> None:
    """A call the change adds or removes to a kernel function whose body the caller knows (``callees``) brings
    that body's facts to the same side, once, and cancels nothing: a memset open-coded where ``__build_skb``
    was called is then both added and removed."""
    for ch in changes.values():
        for side, facts in (("added", ch.added), ("removed", ch.removed)):
            for name in sorted(ch.names(side, "call")):
                for fact in callees.get(name, ()):
                    if ch.lines.get(("callee", side, name, fact)):
                        continue
                    ch.lines[("callee", side, name, fact)] = True
                    facts[fact] += 1
                    ch.lines.setdefault(fact, f"in {name}() (the kernel's own)")


def _touched(side: Side, changed: set[int], heading: str) -> set[str]:
    """The functions holding a changed row of this side (a comment-only change touches its function without
    changing it): the function of a fact on that row, else of the nearest fact before it, else the heading."""
    out = set()
    facts = sorted(side.facts, key=lambda x: x[2])
    for row in changed:
        on = {fn for fn, _, r in facts if r == row}
        if not on:
            before = [fn for fn, _, r in facts if r < row]
            on = {before[-1]} if before else {heading}
        out |= on
    return out


def _expand_helpers(changes: dict[tuple[str, str], FunctionChange]) -> None:
    """A caller's added call to a helper the patch defines brings each fact of the helper's body along once,
    one level at a time until nothing changes (helpers of helpers).  They do not cancel what the caller
    removed: a direct ``kmem_cache_alloc_bulk`` replaced by a cache whose refill calls it is still replaced."""
    helpers = {ch.function: ch for ch in changes.values() if ch.defined}
    for _ in range(4):
        grew = False
        for ch in changes.values():
            if ch.defined:
                continue
            for name in list(ch.names("added", "call")):
                h = helpers.get(name)
                if h is None or ("expanded", name) in ch.lines:
                    continue
                ch.lines[("expanded", name)] = True
                for fact in h.added:  # what the helper does, once: not how many times its body says it
                    if fact.startswith("define:"):
                        continue
                    ch.added[fact] += 1
                    ch.lines.setdefault(fact, f"in {name}(): {h.lines.get(fact, '')}")
                grew = True
        if not grew:
            break
