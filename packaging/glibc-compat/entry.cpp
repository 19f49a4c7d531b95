// The relocatable ddprun's entry point (linked with -Wl,--entry=ddprun_compat_start instead of
// crt1's _start). glibc >= 2.34's crt1 passes init=NULL to __libc_start_main and leaves running
// the executable's constructors to the new __libc_start_main@GLIBC_2.34; the binary links the
// old __libc_start_main@GLIBC_2.2.5 (packaging/README.md), which on a glibc older than 2.34 runs
// only the init function it is given. So this _start gives it one that does what glibc's old
// __libc_csu_init did: _init (crti.o) and then .init_array in order. glibc >= 2.34's compat
// __libc_start_main@GLIBC_2.2.5 calls a given init the same way ("a legacy program which
// supports calling init itself"), so the constructors run once on either. .fini_array and
// DT_FINI are run by ld.so's _dl_fini on both, hence fini=NULL; .preinit_array is ld.so's too.

namespace {
using InitFn = void (*)(int, char**, char**);
}  // namespace

extern "C" {
// Defined by the linker (PROVIDE_HIDDEN) and crti.o.
// NOLINTBEGIN(bugprone-reserved-identifier): the linker's and glibc's names.
extern InitFn __init_array_start[] __attribute__((visibility("hidden")));
extern InitFn __init_array_end[] __attribute__((visibility("hidden")));
void _init();
// NOLINTEND(bugprone-reserved-identifier)

void ddprun_compat_init(int argc, char** argv, char** envp);
void ddprun_compat_init(int argc, char** argv, char** envp) {
  _init();
  for (InitFn* f = __init_array_start; f != __init_array_end; ++f) {
    (*f)(argc, argv, envp);
  }
}
}

// x86_64 SysV process entry, as glibc's sysdeps/x86_64/start.S but with init set: %rdx holds
// ld.so's fini, the stack argc, argv, envp, auxv.
asm(R"(
  .text
  .globl ddprun_compat_start
  .type ddprun_compat_start, @function
ddprun_compat_start:
  .cfi_startproc
  .cfi_undefined rip
  endbr64
  xorl %ebp, %ebp
  movq %rdx, %r9
  popq %rsi
  movq %rsp, %rdx
  andq $-16, %rsp
  pushq %rax
  pushq %rsp
  xorl %r8d, %r8d
  leaq ddprun_compat_init(%rip), %rcx
  movq main@GOTPCREL(%rip), %rdi
  call *__libc_start_main@GOTPCREL(%rip)
  hlt
  .cfi_endproc
  .size ddprun_compat_start, . - ddprun_compat_start
)");
