// The only code that is not in a library: hand the process to the app module.
#include "ddprun/app/main.hpp"

extern char** environ;

int main(int argc, char** argv) { return ddprun::app::main(argc, argv, environ); }
