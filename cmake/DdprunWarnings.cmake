# ddprun_warnings: the warning set every ddprun target compiles with.
add_library(ddprun_warnings INTERFACE)
target_compile_options(ddprun_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
  $<$<BOOL:${DDPRUN_WERROR}>:-Werror>)
