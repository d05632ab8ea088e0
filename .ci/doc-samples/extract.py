#!/usr/bin/env python3
"""Turns the ```swift blocks of README.md and Docs/*.md into a package that `swift build` checks.

Used by `.ci/check-doc-samples`; see the comment at the top of that script for the rules a sample
follows. Two commands:

    extract.py generate REPO OUT   writes the package into OUT (an empty directory)
    extract.py report OUT LOG      prints the build's diagnostics by document and block; exits 1 if any

How a block becomes code. Every document is a module of its own (a test target, so `import Testing`
works everywhere SwiftPM runs), so two guides may both declare a `User`. Within a document, blocks
share that module, as a reader reading the guide from the top would expect: a type, function or
global declared in one block is visible in the later ones. Each block is one file:

- its top-level declarations (types, extensions, functions, and the `let`s of a block that holds only
  declarations, such as `let store = FeedCallback(key: "swift").create()`) stay at file scope; a `let`
  whose only `try` or `await` is inside a closure (`let users = KeyedStore(cache: …) { id in try await
  … }`) counts as a declaration;
- if the block also has statements (`await store.refresh()`, `for await …`, `let user = try await …`),
  the statements and the block's `let`/`var`s go, in order, into the body of an `async throws`
  function of their own, and each such `let` is followed by `_ = name`, so an illustrative unused
  value (`let user = try await store.requireData()`) is not a warning.

Every file imports what any block of its document imports (an import inside `#if canImport(X)` stays
conditional), plus StoreFlowable and `DocSampleStubs`
(`.ci/doc-samples/Stubs.swift`: the placeholders the guides use, such as `api`). `#sourceLocation`
makes the compiler report every diagnostic at its line in the Markdown file.
"""

import json
import os
import re
import sys

# Blocks the checker leaves out: the nearest non-blank line before the fence is this comment.
NO_COMPILE = re.compile(r"^\s*<!--\s*no-compile\b.*-->\s*$")
# A block that is a whole file compiled elsewhere (in a package with dependencies the samples' package
# has not): the nearest non-blank line before the fence is `<!-- same-as: PATH -->`, PATH relative to
# the repository. The block is not compiled here; it must equal the file, line for line.
SAME_AS = re.compile(r"^\s*<!--\s*same-as:\s*(\S+)\s*-->\s*$")
FENCE_OPEN = re.compile(r"^(\s*)```swift\s*$")
FENCE_CLOSE = re.compile(r"^\s*```\s*$")

# `#if canImport(X)` around nothing but `import X` lines: an import where the module exists
# (FoundationNetworking, on Linux).
CONDITIONAL_IMPORT = re.compile(r"^\s*#if\s+canImport\((\w+)\)\s+(import\s+\w+\s+)+#endif\s*$")

# A line at column 0 that starts with one of these continues the item above it.
CONTINUATION = re.compile(r"^(\}|\)|\]|\.|case\b|default\b|catch\b|else\b|where\b|&&|\|\||\?|:|->|#else|#elseif|#endif)")
DECLARATION_KEYWORDS = {
    "struct", "class", "actor", "enum", "protocol", "extension", "func", "typealias", "macro",
    "precedencegroup", "operator", "prefix", "postfix", "infix", "subscript",
}
MODIFIERS = {
    "public", "private", "fileprivate", "internal", "package", "open", "final", "nonisolated",
    "static", "indirect", "isolated", "consuming", "borrowing",
}


def documents(repo):
    """README.md, then Docs/*.md in name order, as paths relative to `repo`."""
    paths = ["README.md"] if os.path.exists(os.path.join(repo, "README.md")) else []
    docs = os.path.join(repo, "Docs")
    if os.path.isdir(docs):
        paths += sorted("Docs/" + name for name in os.listdir(docs) if name.endswith(".md"))
    return paths


def blocks(text):
    """Every ```swift block: (first code line, 1-based; fence indentation; lines; skip reason or None)."""
    lines = text.split("\n")
    found = []
    index = 0
    while index < len(lines):
        opening = FENCE_OPEN.match(lines[index])
        if not opening:
            index += 1
            continue
        indent = len(opening.group(1))
        end = index + 1
        while end < len(lines) and not FENCE_CLOSE.match(lines[end]):
            end += 1
        body = lines[index + 1:end]
        previous = index - 1
        while previous >= 0 and not lines[previous].strip():
            previous -= 1
        reason = None
        same_as = SAME_AS.match(lines[previous]) if previous >= 0 else None
        if same_as:
            reason = "same-as:" + same_as.group(1)
        elif previous >= 0 and NO_COMPILE.match(lines[previous]):
            reason = "marked <!-- no-compile -->"
        elif any(line.strip() == "import PackageDescription" for line in body) or (
            body and body[0].strip().startswith("// swift-tools-version")
        ):
            reason = "a Package.swift manifest"
        found.append((index + 2, indent, body, reason))
        index = end + 1
    return found


def scan(lines):
    """For each line: (bracket depth at its start, whether it starts inside a string or comment).

    A small Swift lexer: line and block comments, string literals (also multi-line and raw) with
    interpolations, and the brackets of the code around them.
    """
    result = []
    depth = 0
    stack = []  # ["string", quote, hashes] | ["interpolation", open parens] | ["comment", nesting]
    for line in lines:
        result.append((depth, bool(stack) and stack[-1][0] in ("string", "comment")))
        i, n = 0, len(line)
        while i < n:
            top = stack[-1] if stack else None
            if top and top[0] == "comment":
                if line.startswith("/*", i):
                    top[1] += 1
                    i += 2
                elif line.startswith("*/", i):
                    top[1] -= 1
                    i += 2
                    if top[1] == 0:
                        stack.pop()
                else:
                    i += 1
                continue
            if top and top[0] == "string":
                quote, hashes = top[1], top[2]
                if line[i] == "\\" and line.startswith("#" * hashes, i + 1):
                    after = i + 1 + hashes
                    if after < n and line[after] == "(":
                        stack.append(["interpolation", 0])
                        i = after + 1
                    else:
                        i = after + 1
                    continue
                if line.startswith(quote + "#" * hashes, i):
                    stack.pop()
                    i += len(quote) + hashes
                    continue
                i += 1
                continue
            # Code: at top level, or inside an interpolation.
            if line.startswith("//", i):
                break
            if line.startswith("/*", i):
                stack.append(["comment", 1])
                i += 2
                continue
            literal = re.match(r'(#*)("""|")', line[i:])
            if literal:
                stack.append(["string", literal.group(2), len(literal.group(1))])
                i += literal.end()
                continue
            char = line[i]
            if top and top[0] == "interpolation":
                if char == "(":
                    top[1] += 1
                elif char == ")":
                    if top[1] == 0:
                        stack.pop()
                    else:
                        top[1] -= 1
            elif char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
            i += 1
        # A single-line string does not continue on the next line.
        while stack and stack[-1][0] == "string" and stack[-1][1] == '"':
            stack.pop()
        while stack and stack[-1][0] == "interpolation":
            stack.pop()
    return result


def is_comment_or_blank(line):
    stripped = line.strip()
    return not stripped or stripped.startswith("//")


def code_of(lines):
    """The lines' text without comment-only lines, joined by spaces."""
    return " ".join(line.strip() for line in lines if not is_comment_or_blank(line))


def strip_attributes(code):
    """`code` without its leading attributes (`@Test(.timeLimit(.minutes(1)))`, `@MainActor`)."""
    while True:
        code = code.lstrip()
        attribute = re.match(r"@[A-Za-z_][\w.]*", code)
        if not attribute:
            return code
        rest = code[attribute.end():]
        if rest.startswith("("):
            level = 0
            for position, char in enumerate(rest):
                level += {"(": 1, ")": -1}.get(char, 0)
                if level == 0:
                    rest = rest[position + 1:]
                    break
        code = rest


def kind_of(lines):
    """"import", "declaration", "binding" (a `let`/`var` without `await` or `try`), or "statement"."""
    code = strip_attributes(code_of(lines))
    if CONDITIONAL_IMPORT.match(code):
        return "import"
    words = code.split()
    while words and words[0] in MODIFIERS:
        words.pop(0)
    first = re.match(r"[A-Za-z_]\w*", words[0]).group(0) if words and re.match(r"[A-Za-z_]", words[0]) else ""
    if first == "import":
        return "import"
    if first in DECLARATION_KEYWORDS or first == "init":
        return "declaration"
    if first in ("let", "var"):
        # Only a `try` or `await` outside every closure runs when the value is bound: the `try await` of
        # `let users = KeyedStore(cache: …) { id in try await api.get(…) }` is the closure's.
        return "statement" if re.search(r"\b(await|try)\b", outside_braces(code)) else "binding"
    return "statement"


def outside_braces(code):
    """`code` without the text between balanced `{` and `}` (closure bodies), roughly: braces inside
    string literals are counted too, which the samples do not use."""
    kept = []
    depth = 0
    for char in code:
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
        elif depth == 0:
            kept.append(char)
    return "".join(kept)


def bound_names(lines):
    """The names a top-level `let`/`var` item binds: `let store = …` gives ["store"]."""
    code = code_of(lines)
    pattern = re.match(r"(?:let|var)\s+(\([^)]*\)|[A-Za-z_]\w*)", code)
    if not pattern:
        return []
    return [name for name in re.findall(r"[A-Za-z_]\w*", pattern.group(1)) if name != "_"]


def items(lines):
    """Splits a block into its top-level items: lists of line indexes, each with its comments."""
    info = scan(lines)
    found = []
    pending = []
    for index, line in enumerate(lines):
        depth, in_literal = info[index]
        if found and (depth > 0 or in_literal):
            found[-1] += pending + [index]
            pending = []
            continue
        if is_comment_or_blank(line):
            pending.append(index)
            continue
        starts_item = not line[:1].isspace() and not CONTINUATION.match(line)
        attributes_only = found and not strip_attributes(code_of([lines[i] for i in found[-1]]))
        if starts_item and not attributes_only or not found:
            found.append(pending + [index])
        else:
            found[-1] += pending + [index]
        pending = []
    if pending:
        if found:
            found[-1] += pending
    return found


def swift_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def generate(repo, out):
    repo = os.path.abspath(repo)
    identity = os.path.basename(repo.rstrip("/"))
    targets = []
    index = {"documents": {}, "skipped": [], "compiled": 0, "generated": {}}
    mismatches = []
    for doc in documents(repo):
        text = open(os.path.join(repo, doc), encoding="utf-8").read()
        module = "DocSample_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(doc))[0])
        doc_path = os.path.join(repo, doc)
        imports = {"StoreFlowable", "DocSampleStubs"}
        conditional_imports = set()
        prepared = []
        spans = []
        for first_line, indent, body, reason in blocks(text):
            spans.append([first_line, first_line + len(body) - 1])
            if reason and reason.startswith("same-as:"):
                path = reason[len("same-as:"):]
                dedented = [line[indent:] for line in body]
                source = os.path.join(repo, path)
                if not os.path.exists(source):
                    mismatches.append("%s:%d: the file %s it is the same as does not exist" % (doc, first_line - 1, path))
                else:
                    expected = open(source, encoding="utf-8").read().rstrip("\n").split("\n")
                    if [line.rstrip() for line in dedented] != [line.rstrip() for line in expected]:
                        mismatches.append("%s:%d: the block differs from %s; copy the file into it" % (doc, first_line - 1, path))
                index["skipped"].append({"doc": doc, "line": first_line - 1, "reason": "the same as %s, compiled there" % path})
                continue
            if reason:
                index["skipped"].append({"doc": doc, "line": first_line - 1, "reason": reason})
                continue
            dedented = [line[indent:] if line[:indent].isspace() or not line[:indent] else line.lstrip() for line in body]
            parts = [(kind_of([dedented[i] for i in item]), item) for item in items(dedented)]
            for kind, item in parts:
                if kind == "import":
                    conditional = any(re.match(r"\s*#if\s+canImport\(", dedented[i]) for i in item)
                    for i in item:
                        name = re.match(r"\s*import\s+(\w+)", dedented[i])
                        if name and conditional:
                            conditional_imports.add(name.group(1))
                        elif name:
                            imports.add(name.group(1))
            prepared.append((first_line, body, dedented, parts))
        index["documents"][doc] = spans
        if not prepared:
            continue
        directory = os.path.join(out, "Tests", module)
        os.makedirs(directory)
        header = "".join("import %s\n" % name for name in sorted(imports))
        header += "".join("#if canImport(%s)\nimport %s\n#endif\n" % (name, name) for name in sorted(conditional_imports))
        for first_line, body, dedented, parts in prepared:
            index["compiled"] += 1

            def located(item):
                chunk = []
                start = None
                for i in item:
                    if start is None or i != start + len(chunk):
                        if chunk:
                            yield start, chunk
                        start, chunk = i, []
                    chunk.append(body[i])
                if chunk:
                    yield start, chunk

            def emit(item, lines_out):
                for start, chunk in located(item):
                    lines_out.append(("#sourceLocation(file: %s, line: %d)" % (swift_string(doc_path), first_line + start), None))
                    lines_out.extend((line, first_line + start + offset) for offset, line in enumerate(chunk))
                    lines_out.append(("#sourceLocation()", None))

            has_statements = any(kind == "statement" for kind, _ in parts)
            file_scope, function_body = [], []
            for kind, item in parts:
                if kind == "import":
                    continue
                if kind == "declaration" or (kind == "binding" and not has_statements):
                    emit(item, file_scope)
                else:
                    emit(item, function_body)
                    if kind == "binding" or re.match(r"\s*(let|var)\b", code_of([dedented[i] for i in item])):
                        names = bound_names([dedented[i] for i in item])
                        if names:
                            function_body.append(("_ = (%s)" % ", ".join(names) if len(names) > 1 else "_ = " + names[0], None))
            source = [("// %s, the ```swift block at line %d. Generated by .ci/check-doc-samples." % (doc, first_line - 1), None)]
            source += [(line, None) for line in header.splitlines()]
            source += file_scope
            if function_body:
                source.append(("func docSample_line%d() async throws {" % first_line, None))
                source += function_body
                source.append(("}", None))
            path = os.path.join(directory, "Line%04d.swift" % first_line)
            with open(path, "w", encoding="utf-8") as file:
                file.write("\n".join(line for line, _ in source) + "\n")
            # Where each generated line comes from, for diagnostics that `#sourceLocation` does not
            # remap (the origin of a macro expansion).
            index["generated"][os.path.realpath(path)] = [doc, [doc_line for _, doc_line in source]]
        targets.append(module)

    stubs = os.path.join(out, "Sources", "DocSampleStubs")
    os.makedirs(stubs)
    with open(os.path.join(repo, ".ci", "doc-samples", "Stubs.swift"), encoding="utf-8") as source:
        stub_text = source.read()
    with open(os.path.join(stubs, "Stubs.swift"), "w", encoding="utf-8") as file:
        file.write(stub_text)

    products = ", ".join(
        '.product(name: "%s", package: %s)' % (product, swift_string(identity))
        for product in ("StoreFlowable", "StoreFlowableTesting", "StoreFlowableFoundation")
    )
    manifest = [
        "// swift-tools-version: 6.0",
        "import PackageDescription",
        "",
        "let package = Package(",
        '    name: "DocSamples",',
        "    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],",
        "    dependencies: [.package(path: %s)]," % swift_string(repo),
        "    targets: [",
        '        .target(name: "DocSampleStubs", dependencies: [.product(name: "StoreFlowable", package: %s)]),'
        % swift_string(identity),
    ]
    for module in targets:
        manifest.append('        .testTarget(name: "%s", dependencies: ["DocSampleStubs", %s]),' % (module, products))
    manifest += ["    ],", "    swiftLanguageModes: [.v6]", ")", ""]
    with open(os.path.join(out, "Package.swift"), "w", encoding="utf-8") as file:
        file.write("\n".join(manifest))
    with open(os.path.join(out, "doc-samples.json"), "w", encoding="utf-8") as file:
        json.dump({"repo": repo, **index}, file, indent=1)
    print("doc samples: %d blocks compiled from %d documents" % (index["compiled"], len(targets)))
    for skipped in index["skipped"]:
        print("  skipped %s:%d (%s)" % (skipped["doc"], skipped["line"], skipped["reason"]))
    for mismatch in mismatches:
        print("FAIL: " + mismatch)
    return 1 if mismatches else 0


DIAGNOSTIC = re.compile(r"^(?P<path>[^:\s][^:]*):(?P<line>\d+):(?P<column>\d+): (?P<severity>warning|error): (?P<message>.*)$")
ORIGIN = re.compile(r"^\W*(?P<path>/[^:]*):(?P<line>\d+):(?P<column>\d+): note: expanded code originates here")


def report(out, log):
    """Prints every warning and error of the build log, by document and block; returns 1 if any."""
    with open(os.path.join(out, "doc-samples.json"), encoding="utf-8") as file:
        index = json.load(file)
    repo = index["repo"]

    def locate(path, number):
        """(document, line in it) for a line of a document or of a generated file, else None."""
        relative = os.path.relpath(path, repo) if path.startswith(repo + "/") else path
        if relative in index["documents"]:
            return relative, number
        generated = index["generated"].get(os.path.realpath(path)) if path.startswith("/") else None
        if generated and 0 < number <= len(generated[1]) and generated[1][number - 1]:
            return generated[0], generated[1][number - 1]
        return None

    def block_of(doc, number):
        for block, (first, last) in enumerate(index["documents"][doc], start=1):
            if first <= number <= last:
                return "%s, swift block %d (fence at line %d)" % (doc, block, first - 1)
        return doc

    lines = open(log, encoding="utf-8", errors="replace").read().split("\n")
    problems = []
    other = []
    for position, line in enumerate(lines):
        match = DIAGNOSTIC.match(line)
        if not match:
            # Skip the compiler's code frames (`12 | …`, `   |  `- error: …`): they repeat a diagnostic.
            if re.match(r"^\s*\d*\s*\|", line) or ORIGIN.match(line):
                continue
            if re.search(r"(^|[^A-Za-z])(warning|error):", line) and "Source files for target" not in line:
                other.append(line)
            continue
        found = locate(match.group("path"), int(match.group("line")))
        column = ":" + match.group("column") if found else ""
        if not found and position + 1 < len(lines):
            # A diagnostic inside a macro expansion (`#expect`): the next line says where the macro is.
            origin = ORIGIN.match(lines[position + 1])
            if origin:
                found = locate(origin.group("path"), int(origin.group("line")))
        if found:
            doc, number = found
            text = "%s\n    %s:%d%s: %s: %s" % (
                block_of(doc, number), doc, number, column, match.group("severity"), match.group("message"))
        else:
            text = line
        problems.append(text)
    for problem in dict.fromkeys(problems):
        print(problem)
    for line in dict.fromkeys(other):
        print(line)
    return 1 if problems or other else 0


def main(arguments):
    if len(arguments) == 3 and arguments[0] == "generate":
        return generate(arguments[1], arguments[2])
    if len(arguments) == 3 and arguments[0] == "report":
        return report(arguments[1], arguments[2])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
