// The only code that is not in a library: hand the process to the app module.
#include "ddprun/app/main.hpp"

int main(int argc, char** argv, char** envp) { return ddprun::app::main(argc, argv, envp); }
