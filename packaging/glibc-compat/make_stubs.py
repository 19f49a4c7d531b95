#!/usr/bin/env python3
"""Link-time stand-ins for glibc's shared libraries, so a binary built on a new glibc binds every
symbol to a version an older glibc has (the relocatable ddprun: packaging/README.md).

For each real library (libc.so.6, libm.so.6, ...) it reads the dynamic symbols (`objdump -T`) and
writes an assembly file and a version script for a stub with the same SONAME, exporting each
symbol once, as the default version, at the NEWEST version the real library has for it that is
not newer than --max (the newest, not the oldest: memcpy@GLIBC_2.14 is the memcpy of today,
pthread_cond_wait@GLIBC_2.2.5 is LinuxThreads' old condition variable). Symbols without such a
version are left out, so the link fails on them unless a shim defines them
(packaging/glibc-compat/shims.cpp). Data objects keep their type, size and section (copy
relocations: stderr, environ), and data objects the real library defines at one address stay
aliases at one address in the stub (environ, __environ and _environ; tzname and __tzname): the
linker then moves all of them with the copy relocation, as it does against the real library, and
glibc's start code, which fills __environ, fills the binary's environ. The stubs are only linked
against, never run.

    make_stubs.py --max 2.28 --out DIR --cc g++ REAL_LIB...
writes DIR/<soname> and DIR/lib<name>.so (the name -l<name> finds) for each REAL_LIB, and
DIR/libc.so, the linker script that -lc finds, naming the stub libc and libc_nonshared.a.
"""

import argparse
import os
import re
import subprocess
import sys

# objdump -T: address, 7 flag characters, section, size, version ("(V)" when hidden), name.
LINE = re.compile(r"^([0-9a-f]+) (.{7}) (\S+)\s+([0-9a-f]+)\s+(\(?)(GLIBC_[0-9.]+)\)?\s+(\S+)$")
LINK_NAMES = {"libc.so.6": "libc.so.6.stub", "ld-linux-x86-64.so.2": "ld-linux-x86-64.so.2"}


def version_key(version):
    return tuple(int(p) for p in version[len("GLIBC_"):].split("."))


def read_symbols(path):
    """{name: [(version, flags, section, size, address)]} of the symbols path defines."""
    out = subprocess.run(["objdump", "-T", path], check=True, capture_output=True, text=True).stdout
    symbols = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if not m or m.group(3) in ("*UND*", "*ABS*"):
            continue
        address, flags, section, size, _, version, name = m.groups()
        symbols.setdefault(name, []).append((version, flags, section, int(size, 16), address))
    return symbols


def choose(symbols, max_version):
    """{name: (version, flags, section, size, address)}: the newest version <= max_version."""
    chosen = {}
    for name, defs in symbols.items():
        old = [d for d in defs if version_key(d[0]) <= max_version]
        if old:
            chosen[name] = max(old, key=lambda d: version_key(d[0]))
    return chosen


def is_function(flags):
    return flags[6] == "F" or flags[4] == "i"  # a function or an IFUNC


def asm_for(names, section, size):
    """One function per name, or one data object labelled with every name (aliases)."""
    labels = [(name, ".weak" if flags[1] == "w" else ".globl") for name, flags in names]
    if is_function(names[0][1]):
        return "".join(f".text\n{bind} {name}\n.type {name},@function\n{name}: ret\n"
                       for name, bind in labels)
    tls = section in (".tbss", ".tdata")
    sect = ".section .tbss,\"awT\",@nobits" if tls else ".data"
    kind = "@tls_object" if tls else "@object"
    heads = "".join(f"{bind} {name}\n.type {name},{kind}\n.size {name},{size}\n{name}:\n"
                    for name, bind in labels)
    return f"{sect}\n.balign 16\n{heads}.zero {max(size, 1)}\n"


def stub_asm(chosen):
    """The stub's assembly: data objects at one address in the real library share one."""
    groups = {}
    for name, (_, flags, section, size, address) in sorted(chosen.items()):
        key = (name,) if is_function(flags) else (section, address, size)
        groups.setdefault(key, []).append((name, flags))
    return "".join(asm_for(names, chosen[names[0][0]][2], chosen[names[0][0]][3])
                   for names in groups.values())


def version_script(chosen):
    by_version = {}
    for name, (version, *_rest) in chosen.items():
        by_version.setdefault(version, []).append(name)
    nodes = []
    for version in sorted(by_version, key=version_key):
        names = "".join(f"  {n};\n" for n in sorted(by_version[version]))
        nodes.append(f"{version} {{\nglobal:\n{names}}};\n")
    return "".join(nodes) + "GLIBC_PRIVATE { local: *; };\n"


def soname_of(path):
    out = subprocess.run(["objdump", "-p", path], check=True, capture_output=True, text=True).stdout
    m = re.search(r"^\s*SONAME\s+(\S+)$", out, re.M)
    return m.group(1) if m else os.path.basename(path)


def make_stub(real, max_version, out_dir, cc):
    soname = soname_of(real)
    chosen = choose(read_symbols(real), max_version)
    base = os.path.join(out_dir, soname)
    with open(base + ".s", "w", encoding="utf-8") as f:
        f.write(stub_asm(chosen))
        f.write('.section .note.GNU-stack,"",@progbits\n')
    with open(base + ".map", "w", encoding="utf-8") as f:
        f.write(version_script(chosen))
    target = os.path.join(out_dir, LINK_NAMES.get(soname, soname))
    subprocess.run([cc, "-shared", "-nostdlib", "-o", target, base + ".s",
                    f"-Wl,-soname,{soname}", f"-Wl,--version-script,{base}.map"], check=True)
    link_name = re.sub(r"\.so\..*$", ".so", soname)
    if soname != "libc.so.6" and link_name != soname:
        force_symlink(os.path.basename(target), os.path.join(out_dir, link_name))
    return soname, target, len(chosen)


def force_symlink(src, dst):
    if os.path.lexists(dst):
        os.remove(dst)
    os.symlink(src, dst)


def write_libc_script(out_dir, stubs, nonshared):
    libc = stubs["libc.so.6"]
    ld = stubs.get("ld-linux-x86-64.so.2")
    as_needed = f" AS_NEEDED ( {ld} )" if ld else ""
    with open(os.path.join(out_dir, "libc.so"), "w", encoding="utf-8") as f:
        f.write(f"/* generated by make_stubs.py: the stub libc, then glibc's own nonshared part */\n"
                f"GROUP ( {libc} {nonshared}{as_needed} )\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", required=True, help="newest glibc version allowed, e.g. 2.28")
    ap.add_argument("--out", required=True)
    ap.add_argument("--cc", required=True, help="the compiler driver that assembles and links")
    ap.add_argument("--nonshared", required=True, help="the real libc_nonshared.a")
    ap.add_argument("libs", nargs="+", help="the real shared libraries")
    args = ap.parse_args()
    max_version = version_key("GLIBC_" + args.max)
    os.makedirs(args.out, exist_ok=True)
    stubs = {}
    for real in args.libs:
        soname, target, count = make_stub(real, max_version, args.out, args.cc)
        stubs[soname] = target
        print(f"make_stubs: {soname}: {count} symbols at GLIBC_{args.max} or older")
    if "libc.so.6" not in stubs:
        sys.exit("make_stubs: libc.so.6 must be among the libraries")
    write_libc_script(args.out, stubs, args.nonshared)


if __name__ == "__main__":
    main()
