"""The house rules, as the code's imports show them.

- What is served is apart from how it is carried: a transport (runtime/src/stdio.rs and
  stdio/, runtime/src/http/) knows the `Started` server it was given, the session and the
  protocol, never the builder or the dispatcher; and the app (runtime/src/server/) imports no
  transport.
- Lower layers stay below: the protocol's vocabulary (protocol/) and schemas (schema/) import
  nothing of MCP Apps (apps/); the ranking (search/) works over tool descriptors and manifests,
  not the registry.
- The crate root shows what a tool author meets: at most 15 items beside its modules (a
  re-export of a module is a module; hidden items do not count).
- No symbolic link in the repository: they break on Windows checkouts and in packaged crates.

A file is as long as its one job needs: length is no rule here (serde's `de.rs` is long and
has one job).
"""

import pathlib
import re
import subprocess
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


ROOT_ITEMS = 15


def root_items(lib: pathlib.Path) -> list[str]:
    """The names the crate root shows beside its modules: the types, functions and crates it
    re-exports, the attributes of the macro crate, and its exported macros, leaving out what is
    `#[doc(hidden)]` and what lives in a module (`__private` included)."""
    items = []
    hidden = False
    for line in lib.read_text().splitlines():
        if line.startswith((" ", "\t", "#[", "//")) or not line.strip():
            hidden = hidden or line.strip() == "#[doc(hidden)]"
            continue
        match = re.match(r"pub use ([\w:]+?)(?:::\{([^}]*)\})?;", line)
        if match and not hidden:
            path, names = match.groups()
            for name in names.split(",") if names else [path.split("::")[-1]]:
                name = name.strip().split(" as ")[-1]
                crate = "::" not in path
                if name and (name[0].isupper() or crate or path.startswith("toolwright_macros")):
                    items.append(name)
        match = re.match(r"macro_rules! (\w+)", line)
        if match and not hidden:
            items.append(match.group(1) + "!")
        hidden = False
    return items


def main() -> int:
    problems = []
    problems += imports(
        ["runtime/src/protocol", "runtime/src/schema"],
        r"\bcrate::apps\b",
        "a lower layer imports MCP Apps; take what it needs as data",
    )
    problems += imports(
        ["runtime/src/search"],
        r"\bcrate::registry\b",
        "the ranking imports the registry; it works over descriptors and manifests",
    )
    items = root_items(pathlib.Path("runtime/src/lib.rs"))
    if len(items) > ROOT_ITEMS:
        problems.append(
            f"runtime/src/lib.rs: the crate root shows {len(items)} items beside its modules, over "
            f"{ROOT_ITEMS}: {', '.join(items)}; move tooling into a public module"
        )
    links = subprocess.run(
        ["git", "ls-files", "-s"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    for entry in links:
        if entry.startswith("120000 "):
            problems.append(f"{entry.split(maxsplit=3)[3]}: a symbolic link; keep one file")
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
    print("protocol/ and schema/ import nothing of apps/; search/ nothing of the registry")
    print(f"the crate root shows {len(items)} items beside its modules: {', '.join(items)}")
    print("no symbolic link")
    return 0


if __name__ == "__main__":
    sys.exit(main())
