// ddprun_glibc_probe: linked exactly as the relocatable ddprun (cmake/DdprunRelocatable.cmake:
// the GLIBC_2.28 stubs, the shims, the entry point) and run by tests/package on the build machine
// and in the Debian 11 root. Each check calls what the binary's shims and entry point stand in
// for, and fails with one line naming it:
//   ddprun_glibc_probe HOSTS_NAME    (a name /etc/hosts maps to 127.0.0.1)
// Exit 0 and one "glibc_probe: ok" line when all hold.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

namespace {
// NOLINTBEGIN(cppcoreguidelines-avoid-non-const-global-variables): what the constructors count.
int g_attribute_constructor_runs = 0;
int g_dynamic_init_runs = 0;
// NOLINTEND(cppcoreguidelines-avoid-non-const-global-variables)

__attribute__((constructor)) void count_constructor() { ++g_attribute_constructor_runs; }

int count_dynamic_init() { return ++g_dynamic_init_runs; }
const int k_dynamic_init = count_dynamic_init();

constexpr auto k_short_wait = std::chrono::milliseconds(20);
constexpr unsigned k_probe_fd = 100;

bool fail(const std::string& what) {
  (void)std::fprintf(stderr, "glibc_probe: FAIL: %s\n", what.c_str());
  return false;
}

bool constructors_once() {
  if (g_attribute_constructor_runs != 1 || g_dynamic_init_runs != 1 || k_dynamic_init != 1) {
    return fail("constructors ran " + std::to_string(g_attribute_constructor_runs) +
                " and dynamic initialisers " + std::to_string(g_dynamic_init_runs) +
                " times, expected once");
  }
  return true;
}

bool exceptions() {
  try {
    throw std::runtime_error("probe");
  } catch (const std::runtime_error& e) {
    return std::string(e.what()) == "probe" || fail("caught the wrong exception");
  }
}

// getaddrinfo through the system's NSS (files: /etc/hosts) gives 127.0.0.1 for NAME.
bool resolves_to_loopback(const char* name) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  const int rc = getaddrinfo(name, "29400", &hints, &res);
  if (rc != 0) {
    return fail(std::string("getaddrinfo ") + name + ": " + gai_strerror(rc));
  }
  char text[INET_ADDRSTRLEN] = {};
  const auto* in = reinterpret_cast<const sockaddr_in*>(res->ai_addr);  // NOLINT
  inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
  freeaddrinfo(res);
  return std::string(text) == "127.0.0.1" || fail(std::string(name) + " resolved to " + text);
}

bool stat_and_close_range() {
  struct stat by_path {};
  struct stat by_fd {};
  const int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || stat("/proc/self/exe", &by_path) != 0 || fstat(fd, &by_fd) != 0 ||
      by_path.st_ino != by_fd.st_ino || by_fd.st_size <= 0) {
    return fail("stat/fstat of /proc/self/exe disagree");
  }
  if (dup2(fd, static_cast<int>(k_probe_fd)) < 0 || close_range(k_probe_fd, ~0U, 0) != 0 ||
      fcntl(static_cast<int>(k_probe_fd), F_GETFD) != -1 || errno != EBADF) {
    return fail("close_range left descriptor " + std::to_string(k_probe_fd) + " open");
  }
  close(fd);
  return true;
}

// steady_clock waits (pthread_cond_clockwait, pthread_mutex_clocklock), a thread, gettid,
// std::random_device (arc4random).
bool threads_and_clocks() {
  std::mutex m;
  std::condition_variable cv;
  std::unique_lock<std::mutex> lock(m);
  if (cv.wait_for(lock, k_short_wait) != std::cv_status::timeout) {
    return fail("condition_variable::wait_for did not time out");
  }
  std::timed_mutex tm;
  pid_t thread_tid = 0;
  std::thread t([&] {
    thread_tid = gettid();
    std::lock_guard<std::timed_mutex> hold(tm);
  });
  t.join();
  if (!tm.try_lock_for(k_short_wait) || thread_tid <= 0 || thread_tid == gettid() ||
      gettid() != getpid()) {
    return fail("timed_mutex::try_lock_for or gettid");
  }
  tm.unlock();
  std::random_device rd;
  return (rd() | rd() | rd()) != 0 || fail("std::random_device gave only zeros");
}

// The global environ is the process's environment, as getenv sees it (the stubs keep environ and
// __environ, which glibc's start code fills, at one address, so the copy relocation moves both).
bool environ_is_filled(char** envp) {
  const char* path = getenv("PATH");
  if (environ != envp || environ == nullptr || path == nullptr) {
    return fail(std::string("environ is ") + (environ == nullptr ? "empty" : "not main's envp") +
                (path == nullptr ? " and PATH is unset (run the probe with PATH set)" : ""));
  }
  return true;
}
}  // namespace

int main(int argc, char** argv, char** envp) {
  if (argc != 2) {
    (void)std::fprintf(stderr, "usage: ddprun_glibc_probe HOSTS_NAME\n");
    return 2;
  }
  const bool ok = constructors_once() && exceptions() && environ_is_filled(envp) &&
                  resolves_to_loopback("localhost") && resolves_to_loopback(argv[1]) &&
                  stat_and_close_range() && threads_and_clocks();
  if (ok) {
    std::printf(
        "glibc_probe: ok (constructors once, exceptions, environ, getaddrinfo localhost and %s, "
        "stat, close_range, steady waits, threads, random_device)\n",
        argv[1]);
  }
  return ok ? 0 : 1;
}
