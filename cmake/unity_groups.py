#!/usr/bin/env python3
"""Collision-free unity groups for one target (cmake/unity.cmake runs it at configure time).

A unity build compiles several .cc files as one translation unit, so a file's internal names
(anonymous namespace, `static`, namespace-scope const/constexpr variables, types, aliases,
macros, using-directives) reach the files after it: a redefinition error at best, at worst a
helper that silently hides or overloads a name another file calls (report/infer_render.cc's
one-argument `Join` would hide core's `Join(v, sep)` in sku_render.cc). This script lists, per
file, the unqualified names it declares at namespace scope, internal and external, and every
identifier it mentions, and packs the files, in sorted order, first-fit into groups of at most
--batch files in which no file's internal name is declared or mentioned by another, no external
function is declared by two, aliases of one name agree, and the using-directives are the same.
Stricter than C++ needs (same-named overloads of different types, or a name the other file uses
only as a member, are kept apart too), which is the point: two files are grouped only when
nothing of one can change the meaning of the other. The scan is textual (comments, strings and
preprocessor lines other than #define are dropped; all #if branches are read).

Output: one line per file, "GROUP FILE", GROUP "-" for a file compiled alone. --check prints the
clashing names of each pair of files; --selftest checks the scanner on known cases.
"""
import argparse
import re
import sys

IDENT = re.compile(r"[A-Za-z_]\w*")
KEYWORDS = {
    "const", "constexpr", "consteval", "constinit", "static", "inline", "extern", "thread_local",
    "volatile", "unsigned", "signed", "long", "short", "int", "double", "float", "char", "bool",
    "void", "auto", "struct", "class", "enum", "union", "typename", "template", "noexcept",
    "override", "final", "mutable", "explicit", "friend", "virtual", "return", "decltype",
    "operator", "using", "namespace", "typedef", "std", "size_t", "int64_t", "uint64_t",
    "int32_t", "uint32_t", "uint8_t", "nodiscard", "maybe_unused",
}


def strip(text):
    """Removes comments, string and character literals (kept as empty quotes) and preprocessor
    lines other than #define (returned separately)."""
    out = []
    defines = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start:
            j = i
            while j < n and text[j] in " \t":
                j += 1
            if j < n and text[j] == "#":
                end = j
                while end < n and (text[end] != "\n" or text[end - 1] == "\\"):
                    end += 1
                m = re.match(r"#\s*define\s+(\w+)", text[j:end])
                if m:
                    defines.append(m.group(1))
                i = end
                continue
        at_line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        raw_start = c == "R" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))
        m = re.match(r'R"([^(\s]*)\(', text[i:i + 20]) if raw_start else None
        if m:
            close = ")" + m.group(1) + '"'
            end = text.find(close, i + m.end())
            out.append('""')
            i = n if end < 0 else end + len(close)
            continue
        if c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
            continue
        if c == "\n":
            at_line_start = True
        out.append(c)
        i += 1
    return "".join(out), defines


def declared_name(head):
    """The unqualified name an item at namespace scope declares, or None (a qualified
    definition such as `Foo::Run(...)`, an operator, a namespace, a static_assert)."""
    head = re.sub(r"\[\[.*?\]\]", " ", head).strip()
    if head.startswith("template"):
        head = re.sub(r"^(template\s*<.*?>\s*)+", "", head, flags=re.S)
    if not head or head.startswith("static_assert") or head.startswith("extern \"\""):
        return None
    m = re.match(r"(?:typedef\b.*\b(\w+)\s*$)", head, re.S)
    if m:
        return m.group(1)
    m = re.match(r"using\s+namespace\s+([\w:]+)", head)
    if m:
        return "using namespace " + m.group(1)
    m = re.match(r"using\s+(\w+)\s*=(.*)", head, re.S)
    if m:
        return "using " + m.group(1) + " = " + re.sub(r"\s+", "", m.group(2))
    if head.startswith("using "):
        return None  # using-declaration: names something declared elsewhere
    head = re.sub(r"^(static|inline|constexpr|const)\s+", "", head)
    m = re.match(r"(?:enum\s+(?:class|struct)\s+|enum\s+|struct\s+|class\s+|union\s+)"
                 r"(?:alignas\([^)]*\)\s*)?(\w+)", head)
    if m and not re.search(r"[(=]", head[: m.end()]):
        # `struct Foo {`, `struct Foo : Bar {`, `struct Foo;`; `struct Foo bar = ...` declares bar
        rest = head[m.end():].strip()
        if not rest or rest[0] in ":{" or rest.startswith("final"):
            return m.group(1)
    if "operator" in head.split("(")[0]:
        return None
    # A function (name before the first parenthesis) or a variable (name before = { [ or ;).
    paren = head.find("(")
    eq = min([p for p in (head.find("="), head.find("{"), head.find("[")) if p >= 0], default=-1)
    cut = paren if paren >= 0 and (eq < 0 or paren < eq) else eq
    before = head if cut < 0 else head[:cut]
    before = before.rstrip()
    if before.endswith(">"):
        return None  # template specialisation or the like: not a new name
    m = re.search(r"([\w:~]+)\s*$", before)
    if not m:
        return None
    name = m.group(1)
    if "::" in name or name.startswith("~") or name in KEYWORDS:
        return None
    if paren >= 0 and cut == paren and re.fullmatch(r"[A-Z][A-Z0-9_]*", name):
        return None  # a macro's invocation (TEST, TEST_F, INSTANTIATE_TEST_SUITE_P)
    return name


class Unit:
    """What one file brings into a unity translation unit and what it could be changed by."""

    def __init__(self, path):
        self.internal, self.external, self.aliases, self.directives, self.idents = scan(path)

    def clashes(self, other):
        """The names by which one of the two files could change the other's meaning: an
        internal name (anonymous namespace, static, const variable, type, macro) of one that the
        other declares or merely mentions (it would hide or overload what the other finds), an
        external function of one that the other also declares (a new overload), an alias the
        other mentions with another meaning, or a different set of using-directives."""
        out = set()
        for a, b in ((self, other), (other, self)):
            out |= a.internal & b.idents
            out |= a.external & (b.internal | b.external)
            for name, target in a.aliases.items():
                if name in b.idents and b.aliases.get(name) != target:
                    out.add(name)
        out |= self.directives ^ other.directives
        return out


def scan(path):
    text, defines = strip(open(path, encoding="utf-8").read())
    internal, external, aliases, directives = set(defines), set(), {}, set()

    def add(head, in_anon):
        name = declared_name(head)
        if not name:
            return
        if name.startswith("using namespace "):
            directives.add(name)
        elif name.startswith("using "):
            alias, target = name[len("using "):].split(" = ", 1)
            aliases[alias] = target
        elif (in_anon or re.match(r"(static|struct|class|enum|union)\b", head)
              or (re.match(r"(inline\s+)?(const|constexpr)\b", head)
                  and "(" not in head.split("=")[0])):
            internal.add(name)
        else:
            external.add(name)

    # Walk the braces; an item is at namespace scope when every enclosing brace is a namespace's.
    stack = []  # None for a non-namespace brace, else True for an anonymous namespace
    head = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        ns_scope = None not in stack
        in_anon = any(stack)
        if c == "{":
            h = "".join(head).strip()
            m = re.match(r"(inline\s+)?namespace\b\s*([\w:]*)", h)
            if m:
                stack.append(not m.group(2))
            elif h.startswith('extern ""'):
                stack.append(False)
            else:
                if ns_scope:
                    add(h, in_anon)
                stack.append(None)
            head = []
        elif c == "}":
            if stack:
                stack.pop()
            head = []
        elif c == ";":
            if ns_scope:
                add("".join(head).strip(), in_anon)
            head = []
        elif c == "(" and ns_scope:
            # A balanced parenthesis group whole (lambdas, initialisers, parameter lists).
            depth, j = 0, i
            while j < n:
                if text[j] == "(":
                    depth += 1
                elif text[j] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            head.append(text[i:j + 1])
            i = j + 1
            continue
        elif ns_scope:
            head.append(c)
        i += 1
    return internal, external, aliases, frozenset(directives), set(IDENT.findall(text))


SELFTEST = [
    # (file a, file b, the names that must keep them apart; empty: may share a group)
    ("namespace ndt {\nnamespace {\nint Helper(int x) { return x; }\n}  // namespace\n}",
     "namespace ndt {\nnamespace {\ndouble Helper(double x) { return x; }\n}\n}", {"Helper"}),
    # b calls a Join of a header; a's anonymous Join(v) would hide it.
    ("namespace {\nstd::string Join(const V& v) { return v[0]; }\n}",
     "#include \"core/strings.h\"\nvoid F() { Join(v, \", \"); }", {"Join"}),
    ("static const double kInf = 1e300;", "namespace a { constexpr double kInf = 1; }", {"kInf"}),
    ("struct Candidate { int vms; };", "void F() { Candidate c; }", {"Candidate"}),
    ("#define CHECK_OK(x) x", "void F() { CHECK_OK(1); }", {"CHECK_OK"}),
    ("using Json = nlohmann::json;\nvoid F() { Json j; }",
     "using Json = nlohmann::json;\nvoid G() { Json j; }", set()),
    ("using Json = nlohmann::ordered_json;\nvoid F() { Json j; }",
     "void G() { Json j; }", {"Json"}),
    ("using namespace testing_helpers;", "void G() {}", {"using namespace testing_helpers"}),
    # External functions of two files: apart only when both declare the name (an overload).
    ("Status LoadA(int x) { return Ok(); }", "void G() { LoadA(1); }", set()),
    ("Status Load(int x) { return Ok(); }", "Status Load(double x) { return Ok(); }", {"Load"}),
    # Members, qualified definitions, tests, comments and strings declare nothing.
    ("Status Foo::Run(int x) { int Local = 1; return Ok(); }\nTEST(A, B) { EXPECT_EQ(1, 1); }",
     "// Local Run TEST\nvoid G() { Log(\"Local\"); Run(); }", set()),
]


def selftest():
    import os
    import tempfile
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        for i, (a, b, want) in enumerate(SELFTEST):
            pa, pb = os.path.join(d, f"{i}a.cc"), os.path.join(d, f"{i}b.cc")
            open(pa, "w").write(a)
            open(pb, "w").write(b)
            got = Unit(pa).clashes(Unit(pb))
            if got != want:
                print(f"case {i}: clashes {sorted(got)}, want {sorted(want)}")
                bad += 1
    print(f"{len(SELFTEST) - bad} passed, {bad} failed")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--selftest", action="store_true", help="check the scanner on known cases")
    ap.add_argument("--batch", type=int, default=8, help="most files per group")
    ap.add_argument("--check", action="store_true", help="print the names shared by files")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    if a.selftest:
        return selftest()
    files = sorted(a.files)
    units = {f: Unit(f) for f in files}
    if a.check:
        for i, f in enumerate(files):
            for g in files[i + 1:]:
                c = units[f].clashes(units[g])
                if c:
                    print(f"{f} {g}: {' '.join(sorted(c))}")
        return
    groups = []  # lists of files; first fit in sorted order
    for f in files:
        for g in groups:
            if len(g) < a.batch and not any(units[f].clashes(units[h]) for h in g):
                g.append(f)
                break
        else:
            groups.append([f])
    for gi, g in enumerate(groups):
        for f in g:
            print(f"{gi if len(g) > 1 else '-'} {f}")


if __name__ == "__main__":
    sys.exit(main())
