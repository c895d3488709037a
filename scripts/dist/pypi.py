#!/usr/bin/env python3
"""Writes the PyPI wheel of mcp-shutdown-conformance around a prebuilt binary.

The wheel holds no Python package: `<name>.data/scripts/` carries the binary as
`mcp-shutdown` and a small launcher as `mcp-shutdown-conformance` (the command `uvx` and
`pipx run` look for), so pip, uv and pipx put both on PATH. This is what maturin's
`bindings = "bin"` produces, written directly so that the wheel packs the very binary the npm
package does (maturin would run its own `cargo build`).

The platform tag comes from the binary itself: `manylinux_2_<N>_x86_64`, where glibc 2.N is the
newest symbol version it needs (read from its ELF version-needs table), after checking that it
links only the libraries every manylinux system has. Only the standard library is used; the
output is byte-for-byte reproducible (file times from SOURCE_DATE_EPOCH, else 1980-01-01).

With `--plugin DIR` it also writes the pure-Python wheel of the pytest plugin
(packaging/pytest-mcp-shutdown), at the same version and pinned to the binary's wheel.

Usage: dist-pypi.py --binary PATH --version V --readme FILE --launcher FILE --out DIR [--plugin DIR]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import os
import re
import struct
import sys
import time
import zipfile
from pathlib import Path

NAME = "mcp-shutdown-conformance"
SUMMARY = "Conformance suite for how MCP stdio servers behave when their session ends"
LICENSE = "MIT OR Apache-2.0"

# Libraries the manylinux policies (PEP 600, auditwheel's policy.json) let a wheel link
# without bundling them; a Rust binary normally needs only the first few.
ALLOWED_LIBS = {
    "libc.so.6",
    "libm.so.6",
    "libdl.so.2",
    "librt.so.1",
    "libpthread.so.0",
    "libgcc_s.so.1",
    "libutil.so.1",
    "libresolv.so.2",
    "ld-linux-x86-64.so.2",
}

SHT_DYNAMIC = 6
SHT_GNU_VERNEED = 0x6FFFFFFE
DT_NEEDED = 1
EM_X86_64 = 62


class DistError(Exception):
    """A reason the wheel cannot be written; the message names the file."""


def elf_needs(data: bytes, path: str) -> tuple[set[str], set[str]]:
    """(DT_NEEDED libraries, versions required from them) of a little-endian ELF64 x86-64."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise DistError(f"{path}: not a little-endian 64-bit ELF file")
    (machine,) = struct.unpack_from("<H", data, 18)
    if machine != EM_X86_64:
        raise DistError(f"{path}: not an x86-64 binary (e_machine {machine})")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [
        struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)
    ]

    def string(table: int, offset: int) -> str:
        start = sections[table][4] + offset
        return data[start : data.index(b"\0", start)].decode()

    needed: set[str] = set()
    versions: set[str] = set()
    for _name, kind, _flags, _addr, off, size, link, _info, _align, _entsize in sections:
        if kind == SHT_DYNAMIC:
            for at in range(off, off + size, 16):
                tag, val = struct.unpack_from("<qQ", data, at)
                if tag == DT_NEEDED:
                    needed.add(string(link, val))
        elif kind == SHT_GNU_VERNEED:
            at = off
            while True:
                _ver, count, _file, aux, nxt = struct.unpack_from("<HHIII", data, at)
                a = at + aux
                for _ in range(count):
                    _hash, _flags2, _other, name, anext = struct.unpack_from("<IHHII", data, a)
                    versions.add(string(link, name))
                    a += anext
                if nxt == 0:
                    break
                at += nxt
    return needed, versions


def platform_tag(needed: set[str], versions: set[str], path: str) -> str:
    """`manylinux_2_N_x86_64` for the newest GLIBC_2.N needed (at least 2.17)."""
    extra = sorted(needed - ALLOWED_LIBS)
    if extra:
        raise DistError(f"{path}: links {', '.join(extra)}, which manylinux does not provide")
    minors = [int(m.group(1)) for v in versions if (m := re.fullmatch(r"GLIBC_2\.(\d+)(\.\d+)?", v))]
    return f"manylinux_2_{max([17, *minors])}_x86_64"


def metadata(version: str, readme: str) -> str:
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\n"
        f"Version: {version}\n"
        f"Summary: {SUMMARY}\n"
        f"License: {LICENSE}\n"
        "Keywords: mcp,model-context-protocol,conformance,stdio,shutdown,testing\n"
        "Classifier: Environment :: Console\n"
        "Classifier: Operating System :: POSIX :: Linux\n"
        "Classifier: Topic :: Software Development :: Testing\n"
        "Requires-Python: >=3.8\n"
        "Description-Content-Type: text/markdown\n"
        "\n"
        f"{readme}"
    )


def record_line(path: str, content: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(content)}\n"


def build_wheel(binary: Path, version: str, readme: Path, launcher: Path, out: Path) -> Path:
    data = binary.read_bytes()
    needed, versions = elf_needs(data, str(binary))
    tag = f"py3-none-{platform_tag(needed, versions, str(binary))}"
    dist = f"{NAME.replace('-', '_')}-{version}"
    files = {
        f"{dist}.data/scripts/mcp-shutdown": (data, 0o755),
        f"{dist}.data/scripts/{NAME}": (launcher.read_bytes(), 0o755),
        f"{dist}.dist-info/METADATA": (metadata(version, readme.read_text()).encode(), 0o644),
        f"{dist}.dist-info/WHEEL": (
            (
                "Wheel-Version: 1.0\n"
                "Generator: mcp-shutdown-conformance scripts/dist/pypi.py\n"
                "Root-Is-Purelib: false\n"
                f"Tag: {tag}\n"
            ).encode(),
            0o644,
        ),
    }
    return write_wheel(files, dist, tag, out)


def write_wheel(files: dict[str, tuple[bytes, int]], dist: str, tag: str, out: Path) -> Path:
    """Zips `files` (path → content, mode) with their RECORD into `out/<dist>-<tag>.whl`."""
    record_path = f"{dist}.dist-info/RECORD"
    record = "".join(record_line(p, c) for p, (c, _) in files.items()) + f"{record_path},,\n"
    files = {**files, record_path: (record.encode(), 0o644)}

    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    stamp = time.gmtime(max(epoch, 315532800))[:6]
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{dist}-{tag}.whl"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        # The dist-info goes last, as the wheel spec recommends; RECORD last of all.
        for path in sorted(files, key=lambda p: (".dist-info/" in p, p == record_path, p)):
            content, mode = files[path]
            info = zipfile.ZipInfo(path, date_time=stamp)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, content)
    wheel.write_bytes(buf.getvalue())
    return wheel


def build_plugin_wheel(src: Path, version: str, out: Path) -> Path:
    """The pure-Python wheel of the pytest plugin in `src` (its pyproject.toml says what it
    is), at `version`, depending on the binary's wheel of the same version."""
    try:
        import tomllib
    except ImportError:
        raise DistError("building the pytest plugin's wheel needs Python 3.11+ (tomllib)") from None
    project = tomllib.loads((src / "pyproject.toml").read_text())["project"]
    name = project["name"]
    deps = [
        f"{NAME}=={version}" if re.match(rf"{NAME}\b", d) else d for d in project["dependencies"]
    ]
    dist = f"{name.replace('-', '_')}-{version}"
    meta = (
        "Metadata-Version: 2.1\n"
        f"Name: {name}\n"
        f"Version: {version}\n"
        f"Summary: {project['description']}\n"
        f"License: {project['license']['text']}\n"
        f"Keywords: {','.join(project['keywords'])}\n"
        + "".join(f"Classifier: {c}\n" for c in project["classifiers"])
        + f"Requires-Python: {project['requires-python']}\n"
        + "".join(f"Requires-Dist: {d}\n" for d in deps)
        + "Description-Content-Type: text/markdown\n\n"
        + (src / project["readme"]).read_text()
    )
    points = "".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()) + "\n"
        for group, entries in project["entry-points"].items()
    )
    package = src / "pytest_mcp_shutdown"
    files = {
        f"pytest_mcp_shutdown/{f.name}": (f.read_bytes(), 0o644)
        for f in sorted(package.glob("*.py"))
    }
    files[f"{dist}.dist-info/METADATA"] = (meta.encode(), 0o644)
    files[f"{dist}.dist-info/entry_points.txt"] = (points.encode(), 0o644)
    files[f"{dist}.dist-info/WHEEL"] = (
        (
            "Wheel-Version: 1.0\n"
            "Generator: mcp-shutdown-conformance scripts/dist/pypi.py\n"
            "Root-Is-Purelib: true\n"
            "Tag: py3-none-any\n"
        ).encode(),
        0o644,
    )
    return write_wheel(files, dist, "py3-none-any", out)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--binary", type=Path, required=True)
    p.add_argument("--version", required=True)
    p.add_argument("--readme", type=Path, required=True)
    p.add_argument("--launcher", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--plugin", type=Path, help="the pytest plugin's directory: its wheel too")
    a = p.parse_args(argv)
    try:
        for f in (a.binary, a.readme, a.launcher):
            if not f.is_file():
                raise DistError(f"{f}: no such file")
        print(build_wheel(a.binary, a.version, a.readme, a.launcher, a.out))
        if a.plugin:
            print(build_plugin_wheel(a.plugin, a.version, a.out))
    except DistError as e:
        print(f"dist-pypi: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
