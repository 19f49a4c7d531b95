#pragma once
// The program: argv and the environment in, exit status out.

namespace ddprun::app {

/// Runs ddprun. Exit status: 0 success, 1 worker-group failure or runtime error,
/// 2 usage or configuration error (spec §5.6).
int main(int argc, char** argv, char** envp);

}  // namespace ddprun::app
