// The glibc functions the relocatable ddprun needs that glibc 2.28 lacks (packaging/README.md),
// defined in the binary itself so that it links against the GLIBC_2.28 stubs of make_stubs.py.
// Each is what the newer glibc does, on the Linux system calls (x86_64), or on older glibc
// functions. Linked only into the relocatable build (cmake/DdprunRelocatable.cmake); the list is
// the link's: a symbol missing here fails that link.

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <ctime>

// NOLINTBEGIN(bugprone-reserved-identifier,readability-identifier-naming): glibc's own names.

// ---- stat family (GLIBC_2.33; before that the headers called __xstat): the system calls.
extern "C" int stat(const char* __restrict path, struct stat* __restrict buf) noexcept {
  return static_cast<int>(syscall(SYS_stat, path, buf));
}
extern "C" int lstat(const char* __restrict path, struct stat* __restrict buf) noexcept {
  return static_cast<int>(syscall(SYS_lstat, path, buf));
}
extern "C" int fstat(int fd, struct stat* buf) noexcept {
  return static_cast<int>(syscall(SYS_fstat, fd, buf));
}
extern "C" int fstatat(int dirfd, const char* __restrict path, struct stat* __restrict buf,
                       int flags) noexcept {
  return static_cast<int>(syscall(SYS_newfstatat, dirfd, path, buf, flags));
}
extern "C" int stat64(const char* __restrict path, struct stat64* __restrict buf) noexcept {
  return static_cast<int>(syscall(SYS_stat, path, buf));
}
extern "C" int lstat64(const char* __restrict path, struct stat64* __restrict buf) noexcept {
  return static_cast<int>(syscall(SYS_lstat, path, buf));
}
extern "C" int fstat64(int fd, struct stat64* buf) noexcept {
  return static_cast<int>(syscall(SYS_fstat, fd, buf));
}
extern "C" int fstatat64(int dirfd, const char* __restrict path, struct stat64* __restrict buf,
                         int flags) noexcept {
  return static_cast<int>(syscall(SYS_newfstatat, dirfd, path, buf, flags));
}

// ---- gettid (GLIBC_2.30).
extern "C" pid_t gettid() noexcept { return static_cast<pid_t>(syscall(SYS_gettid)); }

// ---- close_range (GLIBC_2.34). The system call is Linux 5.9; EL8's 4.18 kernel answers ENOSYS
// (an old seccomp profile EPERM), and then the descriptors are closed one by one: those
// /proc/self/fd lists, else every number up to RLIMIT_NOFILE. Only system calls and the stack: it
// runs in forked children.
namespace {
constexpr std::size_t k_dirent_buffer = 4096;
constexpr int k_decimal = 10;

int parse_fd(const char* name) {
  int fd = 0;
  for (const char* c = name; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9' || fd > (INT_MAX - (*c - '0')) / k_decimal) {
      return -1;
    }
    fd = fd * k_decimal + (*c - '0');
  }
  return name[0] == '\0' ? -1 : fd;
}

// One pass over /proc/self/fd closing what lies in [first, last]; how many it closed, or -1
// when /proc cannot be read.
int close_listed(unsigned first, unsigned last) {
  const int dir = static_cast<int>(
      syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir < 0) {
    return -1;
  }
  alignas(8) char buf[k_dirent_buffer];
  int closed = 0;
  long n = 0;
  while ((n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
    for (long off = 0; off < n;) {
      const auto* d = reinterpret_cast<const struct dirent64*>(buf + off);  // NOLINT
      const int fd = parse_fd(d->d_name);
      if (fd >= 0 && fd != dir && static_cast<unsigned>(fd) >= first &&
          static_cast<unsigned>(fd) <= last) {
        syscall(SYS_close, fd);
        ++closed;
      }
      off += d->d_reclen;
    }
  }
  syscall(SYS_close, dir);
  return closed;
}

void close_each(unsigned first, unsigned last) {
  struct rlimit lim {};
  unsigned top = last;
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
      lim.rlim_cur - 1 < top) {
    top = static_cast<unsigned>(lim.rlim_cur - 1);
  }
  for (unsigned fd = first; fd <= top && fd >= first; ++fd) {
    syscall(SYS_close, fd);
  }
}
}  // namespace

extern "C" int close_range(unsigned first, unsigned last, int flags) noexcept {
  const long r = syscall(SYS_close_range, first, last, flags);
  // ENOSYS: a kernel before 5.9; EPERM: a seccomp filter that does not know the call (Docker
  // before 20.10), which close_range itself never answers.
  if (r == 0 || (errno != ENOSYS && errno != EPERM)) {
    return static_cast<int>(r);
  }
  if (flags != 0 || first > last) {
    errno = EINVAL;
    return -1;
  }
  // Closing while reading the directory may skip entries: read it again until a pass closes
  // nothing (glibc's closefrom fallback does the same).
  int closed = 0;
  while ((closed = close_listed(first, last)) > 0) {
  }
  if (closed < 0) {
    close_each(first, last);
  }
  return 0;
}

// ---- arc4random (GLIBC_2.36; libstdc++'s std::random_device): getrandom (Linux 3.17), else
// /dev/urandom. It cannot fail, as glibc's: abort when neither gives bytes.
namespace {
bool fill_random(void* out, std::size_t len) {
  auto* p = static_cast<unsigned char*>(out);
  while (len > 0) {
    const ssize_t n = getrandom(p, len, 0);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    p += n;
    len -= static_cast<std::size_t>(n);
  }
  return true;
}

bool fill_urandom(void* out, std::size_t len) {
  const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  auto* p = static_cast<unsigned char*>(out);
  while (len > 0) {
    const ssize_t n = read(fd, p, len);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;
    }
    p += n;
    len -= static_cast<std::size_t>(n);
  }
  close(fd);
  return len == 0;
}
}  // namespace

extern "C" void arc4random_buf(void* out, std::size_t len) noexcept {
  if (!fill_random(out, len) && !fill_urandom(out, len)) {
    abort();
  }
}
extern "C" std::uint32_t arc4random() noexcept {
  std::uint32_t v = 0;
  arc4random_buf(&v, sizeof v);
  return v;
}

// ---- __libc_single_threaded (GLIBC_2.32): 0 says "maybe threads", so libstdc++ always uses
// atomic reference counts (what it did before glibc 2.32 told it otherwise).
extern "C" {
char __libc_single_threaded = 0;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
}

// ---- pthread_cond_clockwait / pthread_mutex_clocklock (GLIBC_2.30; libstdc++'s steady_clock
// waits) and _dl_find_object (GLIBC_2.35, below): where the running glibc has them (2.30+,
// 2.35+), the shims call glibc's own, found once before main (RTLD_NEXT skips the binary).
// On glibc 2.28/2.29 a CLOCK_MONOTONIC deadline becomes the CLOCK_REALTIME one as far ahead: a
// realtime clock step during that wait ends it early or late. libstdc++, the only caller, passes
// std::condition_variable's and std::timed_mutex's default (realtime) objects; its callers check
// their own clock after a timeout, as they must for spurious wake-ups.
namespace {
constexpr long k_nanos = 1'000'000'000L;
constexpr int k_first_constructor = 101;  // the earliest priority a program may use

using CondClockwait = int (*)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const timespec*);
using MutexClocklock = int (*)(pthread_mutex_t*, clockid_t, const timespec*);
using FindObject = int (*)(void*, struct dl_find_object*);
// NOLINTBEGIN(cppcoreguidelines-avoid-non-const-global-variables): set once, before main.
CondClockwait real_cond_clockwait = nullptr;
MutexClocklock real_mutex_clocklock = nullptr;
FindObject real_find_object = nullptr;
// NOLINTEND(cppcoreguidelines-avoid-non-const-global-variables)

template <typename Fn>
Fn glibc_own(const char* name, const char* version) {
  return reinterpret_cast<Fn>(dlvsym(RTLD_NEXT, name, version));  // NOLINT
}

__attribute__((constructor(k_first_constructor))) void find_glibc_own() {
  real_cond_clockwait = glibc_own<CondClockwait>("pthread_cond_clockwait", "GLIBC_2.30");
  real_mutex_clocklock = glibc_own<MutexClocklock>("pthread_mutex_clocklock", "GLIBC_2.30");
  real_find_object = glibc_own<FindObject>("_dl_find_object", "GLIBC_2.35");
}

bool to_realtime(clockid_t clock, const struct timespec* abstime, struct timespec* out) {
  if (clock == CLOCK_REALTIME) {
    *out = *abstime;
    return true;
  }
  if (clock != CLOCK_MONOTONIC) {
    return false;
  }
  struct timespec mono {};
  struct timespec real {};
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &real);
  long sec = real.tv_sec + (abstime->tv_sec - mono.tv_sec);
  long nsec = real.tv_nsec + (abstime->tv_nsec - mono.tv_nsec);
  sec += nsec / k_nanos;
  nsec %= k_nanos;
  if (nsec < 0) {
    nsec += k_nanos;
    --sec;
  }
  out->tv_sec = sec;
  out->tv_nsec = nsec;
  return true;
}
}  // namespace

extern "C" int pthread_cond_clockwait(pthread_cond_t* __restrict cond,
                                      pthread_mutex_t* __restrict mutex, clockid_t clock,
                                      const struct timespec* __restrict abstime) {
  if (real_cond_clockwait != nullptr) {
    return real_cond_clockwait(cond, mutex, clock, abstime);
  }
  struct timespec real {};
  if (!to_realtime(clock, abstime, &real)) {
    return EINVAL;
  }
  return pthread_cond_timedwait(cond, mutex, &real);
}
extern "C" int pthread_mutex_clocklock(pthread_mutex_t* __restrict mutex, clockid_t clock,
                                       const struct timespec* __restrict abstime) noexcept {
  if (real_mutex_clocklock != nullptr) {
    return real_mutex_clocklock(mutex, clock, abstime);
  }
  struct timespec real {};
  if (!to_realtime(clock, abstime, &real)) {
    return EINVAL;
  }
  return pthread_mutex_timedlock(mutex, &real);
}

// ---- _dl_find_object (GLIBC_2.35): libgcc's unwinder finds each frame's .eh_frame_hdr with it
// (and does not fall back), so every thrown exception goes through here. glibc's own where it
// has one; else the loaded object whose PT_LOAD segments hold the address, found with
// dl_iterate_phdr as libgcc did before.
namespace {
struct FindRequest {
  std::uintptr_t pc;
  struct dl_find_object* out;
  bool found;
};

int find_in(struct dl_phdr_info* info, std::size_t /*size*/, void* data) {
  auto* req = static_cast<FindRequest*>(data);
  std::uintptr_t lo = UINTPTR_MAX;
  std::uintptr_t hi = 0;
  const ElfW(Phdr)* eh = nullptr;
  bool inside = false;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_GNU_EH_FRAME) {
      eh = &ph;
    }
    if (ph.p_type != PT_LOAD) {
      continue;
    }
    const std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    const std::uintptr_t end = start + ph.p_memsz;
    lo = start < lo ? start : lo;
    hi = end > hi ? end : hi;
    inside = inside || (req->pc >= start && req->pc < end);
  }
  if (!inside) {
    return 0;
  }
  req->out->dlfo_flags = 0;
  req->out->dlfo_map_start = reinterpret_cast<void*>(lo);  // NOLINT(performance-no-int-to-ptr)
  req->out->dlfo_map_end = reinterpret_cast<void*>(hi);    // NOLINT(performance-no-int-to-ptr)
  req->out->dlfo_eh_frame =
      eh == nullptr ? nullptr : reinterpret_cast<void*>(info->dlpi_addr + eh->p_vaddr);  // NOLINT
  req->found = true;
  return 1;
}
}  // namespace

extern "C" int _dl_find_object(void* address, struct dl_find_object* result) noexcept {
  if (real_find_object != nullptr) {
    return real_find_object(address, result);
  }
  FindRequest req{reinterpret_cast<std::uintptr_t>(address), result, false};
  dl_iterate_phdr(find_in, &req);
  if (!req.found) {
    return -1;
  }
  Dl_info info{};
  struct link_map* map = nullptr;
  result->dlfo_link_map =
      dladdr1(address, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) != 0 ? map : nullptr;
  return 0;
}

// NOLINTEND(bugprone-reserved-identifier,readability-identifier-naming)
