-- -*- lua -*-
-- Lmod modulefile for ddprun 0.1.0, installed under /opt/ddprun/0.1.0 by
--   cmake --install build --prefix /opt/ddprun/0.1.0
-- or by unpacking ddprun-0.1.0-linux-x86_64.tar.gz there (see packaging/README.md).
-- Copy this file to <modulefiles>/ddprun/0.1.0.lua; change `root` if ddprun lives elsewhere.

local root    = "/opt/ddprun"
local version = myModuleVersion()
local prefix  = pathJoin(root, version)

whatis("Name: ddprun")
whatis("Version: " .. version)
whatis("Category: tools, launcher")
whatis("Description: native drop-in replacement for PyTorch's torchrun launcher")
whatis("URL: https://example.org/ddprun")

help([[
ddprun: launch distributed PyTorch jobs with torchrun's flags and torchrun's worker
environment, from one small native agent per node.

  srun --ntasks-per-node=1 ddprun --nproc_per_node 4 train.py

Sets PATH and MANPATH (man ddprun) and DDPRUN_ROOT. ddprun does not need a PyTorch
module; the workers' Python is chosen with --python or PYTHON_EXEC.
]])

conflict("ddprun")
prepend_path("PATH",    pathJoin(prefix, "bin"))
-- Lmod's init (profile) sets MANPATH=":" when it is empty, so the system man pages stay found.
prepend_path("MANPATH", pathJoin(prefix, "share/man"))
setenv("DDPRUN_ROOT", prefix)
