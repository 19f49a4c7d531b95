// The only code that is not in a library: hand the process to the app module.
#include "ddprun/app/main.hpp"

extern char** environ;

// The environment comes from main's own argument, and `environ` is set from it: in the
// relocatable binary, linked against glibc stubs, `environ` is a copy-relocated variable that
// glibc's start code does not fill (it sets its own __environ), so read as is it was empty and
// the workers lost the launcher's whole environment.
int main(int argc, char** argv, char** envp) {
  environ = envp;
  return ddprun::app::main(argc, argv, envp);
}
