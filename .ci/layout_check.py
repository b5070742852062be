"""The house rules, as the code's imports show them.

- What is served is apart from how it is carried: a transport (runtime/src/stdio.rs and
  stdio/, runtime/src/http/) knows the `Started` server it was given, the session and the
  protocol, never the builder or the dispatcher; and the app (runtime/src/server/) imports no
  transport.

A file is as long as its one job needs: length is no rule here (serde's `de.rs` is long and
has one job).
"""

import pathlib
import re
import sys

TRANSPORTS = ["runtime/src/stdio.rs", "runtime/src/stdio", "runtime/src/http"]
APP = "runtime/src/server"


def rust_files(place: str) -> list[pathlib.Path]:
    root = pathlib.Path(place)
    return [root] if root.is_file() else sorted(root.rglob("*.rs"))


def code_lines(path: pathlib.Path):
    """Each line that is not a comment, with its number."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.lstrip().startswith("//"):
            yield number, line


def imports(places: list[str], pattern: str, why: str) -> list[str]:
    found = []
    for place in places:
        for path in rust_files(place):
            for number, line in code_lines(path):
                if re.search(pattern, line):
                    found.append(f"{path}:{number}: {line.strip()}: {why}")
    return found


def main() -> int:
    problems = []
    problems += imports(
        TRANSPORTS,
        r"\b(dispatch|builder)::",
        "a transport reaches into the dispatcher or the builder; go through `Started`",
    )
    problems += imports(
        [APP],
        r"\bcrate::(stdio|http)\b",
        "the app imports a transport; a transport takes the app, not the other way round",
    )
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("no transport imports the builder or the dispatcher; the app imports no transport")
    return 0


if __name__ == "__main__":
    sys.exit(main())
