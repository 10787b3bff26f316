#!/usr/bin/env python3
"""Groups test files into unity batches for tests/CMakeLists.txt (santral_test_executable).

    unity_batches.py <batch size> <file.cpp>...

Prints one line per file, "<batch number> <file>", in the order given. Files in one batch are
compiled as one translation unit, so no two of them may define the same name at namespace scope
(their helpers live in anonymous namespaces, which merge in a batch): a file joins the first
batch that has room and none of its names. The names are read the way a reader skims: the
identifier before `(`, `=`, `{`, `[` or `;` of each declaration at namespace scope, and the
name of each struct, class, enum and alias there. Nor does a batch hold a file with a helper
named as one a tests/support header declares beside a file that includes that header. Reading
too many names only makes more batches; a name it missed shows as a redefinition when the
batch compiles (add the pattern here).
It fails, naming both files, when two files have a TEST_CASE of the same name: they end up in
one executable, where Catch2 refuses duplicates.
"""
import os
import re
import sys

KEYWORDS = {"TEST_CASE", "TEST_CASE_METHOD", "CATCH_REGISTER_LISTENER", "SECTION",
            "TEMPLATE_TEST_CASE", "SCENARIO", "if", "for", "while", "switch", "return", "operator",
            "static_assert", "decltype", "sizeof", "alignas"}


def without_comments_and_strings(text):
    text = re.sub(r'R"(\w*)\((.*?)\)\1"', '""', text, flags=re.S)
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(\\.|[^'\\\n])*'", "''", text)


def declared_name(head):
    """The name a namespace-scope declaration or definition head introduces, or None."""
    head = re.sub(r"<[^<>;{}]*>", "", re.sub(r"<[^<>;{}]*>", "", head)).strip()
    if not head or head.startswith(("#", "using namespace", "namespace", "template", "return")):
        return None
    kind = re.search(r"\b(?:struct|class|union|enum(?:\s+class|\s+struct)?)\s+(\w+)", head)
    if kind:
        return kind.group(1)
    alias = re.match(r"using\s+(\w+)\s*=", head)
    if alias:
        return alias.group(1)
    if head.startswith("using "):  # `using a::b;` may be repeated in one translation unit
        return None
    # The identifier right before the declarator's first (, =, [ or {: a function, a variable.
    declarator = re.search(r"(\w+)\s*(?:\(|=|\[|\{|$)", head)
    if declarator and declarator.group(1) not in KEYWORDS and len(head.split()) > 1:
        return declarator.group(1)
    return None


def names_defined(text):
    """Names declared at namespace scope (not inside a function, class or initializer)."""
    names, scopes, head = set(), [], ""
    for char in without_comments_and_strings(text):
        if char in "{;":
            opens_namespace = char == "{" and re.search(r"\bnamespace(\s+[\w:]+)?\s*$", head)
            if all(scopes) and not opens_namespace:
                names.add(declared_name(head))
            if char == "{":
                scopes.append(bool(opens_namespace))
            head = ""
        elif char == "}":
            if scopes:
                scopes.pop()
            head = ""
        elif char == "\n" and head.lstrip().startswith("#"):
            head = ""
        else:
            head += char
    names.discard(None)
    return names


def test_case_names(text):
    return re.findall(r'TEST_CASE(?:_METHOD\(\s*\w+\s*,|\()\s*"((?:\\.|[^"\\])*)"', text)


def support_headers(text):
    return set(re.findall(r'#include "tests/support/(\w+\.h)"', text))


def main():
    size, files = int(sys.argv[1]), sys.argv[2:]
    # tests/support's headers: what each declares, and which of them each includes.
    support = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support")
    declared, included = {}, {}
    for header in os.listdir(support):
        if header.endswith(".h"):
            text = open(os.path.join(support, header), encoding="utf-8").read()
            declared[header], included[header] = names_defined(text), support_headers(text)

    def with_what_they_include(headers):
        seen, todo = set(), list(headers)
        while todo:
            header = todo.pop()
            if header not in seen and header in declared:
                seen.add(header)
                todo += included[header]
        return seen

    owner_of_test = {}
    batches = []  # per batch: names defined, support headers included, headers shadowed, count
    for path in files:
        text = open(path, encoding="utf-8").read()
        for test in test_case_names(text):
            if test in owner_of_test:
                sys.exit(f'unity_batches.py: TEST_CASE "{test}" is in {owner_of_test[test]} and '
                         f"{path}; they build into one executable: give one of them another name")
            owner_of_test[test] = path
        names = names_defined(text)
        includes = with_what_they_include(support_headers(text))
        # A helper of its own named as one a support header declares is ambiguous beside a file
        # that includes that header (test files say `using namespace santral::test;`).
        shadows = {header for header, theirs in declared.items() if names & theirs}
        for batch in batches:
            if (batch["count"] < size and not batch["names"] & names
                    and not batch["includes"] & shadows and not batch["shadows"] & includes):
                break
        else:
            batch = {"number": len(batches), "names": set(), "includes": set(), "shadows": set(),
                     "count": 0}
            batches.append(batch)
        batch["names"] |= names
        batch["includes"] |= includes
        batch["shadows"] |= shadows
        batch["count"] += 1
        print(batch["number"], path)


if __name__ == "__main__":
    main()
