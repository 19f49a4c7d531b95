"""In-tree PEP 517 build backend: `pip install . --no-build-isolation` from a checkout.

It runs scripts/wheel.sh, which builds the relocatable binary with CMake (no download, only the
Debian build dependencies of scripts/install-deps.sh) and writes the wheel. An already built
binary can be packaged instead: `pip install . --no-build-isolation --config-settings
binary=build/src/ddprun`. No sdist: ddprun is built from a checkout.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    del metadata_directory  # the wheel's own .dist-info is written by make_wheel.py
    argv = ["bash", os.path.join(ROOT, "scripts", "wheel.sh"), "--out",
            os.path.abspath(wheel_directory)]
    binary = (config_settings or {}).get("binary")
    if binary:
        argv += ["--binary", os.path.abspath(binary)]
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=sys.stderr, check=True, text=True)
    return os.path.basename(done.stdout.strip().splitlines()[-1])
