#!/usr/bin/env bash
# bench/in-root.sh trixie: torchrun 2.6 as the second reference (the row `in-trixie floor`
# measures the entry cost with /bin/true). IN_TRIXIE_PASS names the variables passed in.
#   bench/in-trixie.sh CMD [ARG...]
#   e.g. --launcher 'torchrun 2.6=bench/in-trixie.sh torchrun --monitor_interval 0.1'
exec bash "$(dirname "$0")/in-root.sh" trixie "$@"
