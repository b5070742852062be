"""The house rules: no source file of the library crates over 600 lines outside its tests, and
no transport that reaches into the dispatcher.

Counts each file under runtime/src and macros/src without its `#[cfg(test)]` modules (a module
of tests in a file of its own, `tests.rs` or under `tests/`, is all tests), and fails naming
every file over the limit. A transport (runtime/src/server/stdio.rs, runtime/src/server/http/)
knows the `Service` it was given, the session and the protocol; a path through `dispatch` in one
fails too.
"""

import pathlib
import re
import sys

LIMIT = 600
ROOTS = ["runtime/src", "macros/src"]
TRANSPORTS = ["runtime/src/server/stdio.rs", "runtime/src/server/http"]


def lines_outside_tests(text: str) -> int:
    lines = text.splitlines()
    count = 0
    i = 0
    while i < len(lines):
        if re.match(r"\s*#\[cfg\((all\()?test", lines[i]) and i + 1 < len(lines) and re.match(
            r"\s*(pub(\([^)]*\))? )?mod \w+ \{", lines[i + 1]
        ):
            # Skip the attribute and the module, by its braces.
            depth = 0
            i += 1
            while i < len(lines):
                depth += lines[i].count("{") - lines[i].count("}")
                i += 1
                if depth <= 0:
                    break
            continue
        count += 1
        i += 1
    return count


def main() -> int:
    over = []
    for root in ROOTS:
        for path in sorted(pathlib.Path(root).rglob("*.rs")):
            if path.name == "tests.rs" or "tests" in path.parts[len(pathlib.Path(root).parts):-1]:
                continue
            n = lines_outside_tests(path.read_text())
            if n > LIMIT:
                over.append((path, n))
    for path, n in over:
        print(f"{path}: {n} lines outside tests, over {LIMIT}: split it along a seam")
    if not over:
        print(f"every source file of {', '.join(ROOTS)} is within {LIMIT} lines outside tests")
    reaching = []
    for transport in TRANSPORTS:
        root = pathlib.Path(transport)
        for path in [root] if root.is_file() else sorted(root.rglob("*.rs")):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if re.search(r"\bdispatch::", line) and not line.lstrip().startswith("//"):
                    reaching.append(f"{path}:{number}: {line.strip()}")
    for line in reaching:
        print(f"{line}: a transport reaches into the dispatcher; go through `service::Service`")
    if not reaching:
        print("no transport imports from the dispatcher")
    return 1 if over or reaching else 0


if __name__ == "__main__":
    sys.exit(main())
