"""`python -m ddprun ARGS`: exec the ddprun executable installed with this package."""
import os
import shutil
import sys
import sysconfig
from importlib import metadata


def executable():
    """The ddprun binary the wheel put in the environment's scripts directory."""
    try:
        for f in metadata.files("ddprun") or []:
            if f.name == "ddprun":
                return str(f.locate())
    except metadata.PackageNotFoundError:
        pass
    beside = os.path.join(sysconfig.get_path("scripts"), "ddprun")
    return beside if os.access(beside, os.X_OK) else shutil.which("ddprun")


def main():
    path = executable()
    if path is None or not os.access(path, os.X_OK):
        sys.exit("ddprun: the ddprun executable was not found (reinstall the ddprun wheel)")
    os.execv(path, [path] + sys.argv[1:])


if __name__ == "__main__":
    main()
