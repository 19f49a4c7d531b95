# Installation layout and the Debian package (CPack). `cmake --install build --prefix P` puts:
#   P/bin/ddprun
#   P/share/man/man1/ddprun.1                        (rendered from the flag table)
#   P/share/bash-completion/completions/ddprun        (idem)
#   P/share/zsh/vendor-completions/_ddprun            (idem)
#   P/share/doc/ddprun/{README.md,LICENSE,*.md}
# `cpack -G DEB` (from the build dir) makes ddprun_<version>_<arch>.deb installed under /usr;
# its Depends line comes from dpkg-shlibdeps (package dpkg-dev).
include(GNUInstallDirs)

if(DDPRUN_RELOCATABLE)
  ddprun_make_relocatable(ddprun)
endif()

install(FILES ${DDPRUN_DOCS_DIR}/ddprun.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${DDPRUN_DOCS_DIR}/ddprun.bash
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME ddprun)
install(FILES ${DDPRUN_DOCS_DIR}/_ddprun
  DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES README.md LICENSE docs/from-torchrun.md docs/schedulers.md docs/rendezvous.md
  docs/cli.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_PACKAGE_NAME ddprun)
set(CPACK_PACKAGE_VENDOR "the ddprun authors")
set(CPACK_PACKAGE_CONTACT "ddprun maintainers <ddprun-maintainers@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "native drop-in replacement for PyTorch's torchrun launcher")
set(CPACK_PACKAGE_DESCRIPTION
  "ddprun launches distributed PyTorch jobs with torchrun's flags and gives the workers "
  "torchrun's environment, from one small native agent per node: it starts in milliseconds, "
  "reaps failed workers at once, never leaves orphans and names the failed rank.")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.org/ddprun")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-torch")
set(CPACK_SOURCE_IGNORE_FILES "/build.*/;/\\\\.git/")
include(CPack)
