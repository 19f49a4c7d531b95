"""Writes the ddprun wheel (a zip with a fixed layout, PEP 427) with the standard library only.

    make_wheel.py --binary BIN --version V --platform TAG --package DIR --license FILE --out DIR

Layout: ddprun/*.py (from --package), ddprun-V.data/scripts/ddprun (BIN: pip installs it as
bin/ddprun, executable), ddprun-V.dist-info/{METADATA,WHEEL,LICENSE,RECORD}. Entries carry a
fixed date, so the same inputs give the same bytes. Prints the wheel's path.
"""
import argparse
import base64
import hashlib
import os
import sys
import zipfile

SUMMARY = "native drop-in replacement for PyTorch's torchrun launcher"
FIXED_DATE = (1980, 1, 1, 0, 0, 0)


def metadata(version):
    return (f"Metadata-Version: 2.1\nName: ddprun\nVersion: {version}\nSummary: {SUMMARY}\n"
            "License: BSD-3-Clause\nRequires-Python: >=3.8\n").encode()


def wheel_file(tag):
    return (f"Wheel-Version: 1.0\nGenerator: ddprun make_wheel.py\nRoot-Is-Purelib: false\n"
            f"Tag: {tag}\n").encode()


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def entries(args):
    """(name in the wheel, bytes, executable) for every file except RECORD."""
    dist_info = f"ddprun-{args.version}.dist-info"
    out = []
    for name in sorted(os.listdir(args.package)):
        if name.endswith(".py"):
            with open(os.path.join(args.package, name), "rb") as f:
                out.append((f"ddprun/{name}", f.read(), False))
    with open(args.binary, "rb") as f:
        out.append((f"ddprun-{args.version}.data/scripts/ddprun", f.read(), True))
    with open(args.license, "rb") as f:
        out.append((f"{dist_info}/LICENSE", f.read(), False))
    out.append((f"{dist_info}/METADATA", metadata(args.version), False))
    out.append((f"{dist_info}/WHEEL", wheel_file(f"py3-none-{args.platform}"), False))
    return out


def write_wheel(path, files, record_name):
    record = [record_line(name, data) for name, data, _ in files] + [f"{record_name},,"]
    files = files + [(record_name, ("\n".join(record) + "\n").encode(), False)]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, executable in files:
            info = zipfile.ZipInfo(name, FIXED_DATE)
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--binary", "--version", "--platform", "--package", "--license", "--out"):
        p.add_argument(flag, required=True)
    args = p.parse_args()
    path = os.path.join(args.out, f"ddprun-{args.version}-py3-none-{args.platform}.whl")
    write_wheel(path, entries(args), f"ddprun-{args.version}.dist-info/RECORD")
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
