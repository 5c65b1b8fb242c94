# Install-time metadata: pkg-config files and CMake package configs for
# pam_wrapper (the preload library) and pamtest (libpamtest).
#
# pkg-config: the paths are absolute because users put
# `pkg-config --libs pam_wrapper` straight into LD_PRELOAD, as they do with
# nss_wrapper and uid_wrapper.  The .pc files are generated at install time,
# so `cmake --install --prefix P` gets P's paths.
#
# CMake packages: relocatable.  Every path is computed from the config file's
# own location (configure_package_config_file), so a prefix that is moved or
# given only at install time still works, and no library path of the build
# machine is written into them (see pamtest-config.cmake.in).
include(CMakePackageConfigHelpers)

set(_cfgdir "${CMAKE_BINARY_DIR}/cmake-package")
# Upstream's rule: any older requested version is accepted
# (find_package(pam_wrapper 0.9) finds 1.2), as suites written for
# upstream's packages ask; SameMajorVersion refused them, and with
# Debian's 1.1.4 also installed CMake silently took that one instead.
write_basic_package_version_file(${_cfgdir}/pam_wrapper-config-version.cmake
                                 COMPATIBILITY AnyNewerVersion)
write_basic_package_version_file(${_cfgdir}/pamtest-config-version.cmake
                                 COMPATIBILITY AnyNewerVersion)

configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/pam_wrapper-config.cmake.in
  ${_cfgdir}/pam_wrapper-config.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pam_wrapper
  PATH_VARS CMAKE_INSTALL_LIBDIR PWRAP_INSTALL_MODDIR)
install(FILES ${_cfgdir}/pam_wrapper-config.cmake
              ${_cfgdir}/pam_wrapper-config-version.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pam_wrapper)

if(TARGET pamtest)
  configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/pamtest-config.cmake.in
    ${_cfgdir}/pamtest-config.cmake
    INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pamtest
    PATH_VARS CMAKE_INSTALL_INCLUDEDIR PWRAP_INSTALL_MODDIR)
  install(EXPORT pamtest-targets NAMESPACE pamtest::
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pamtest)
  install(FILES ${_cfgdir}/pamtest-config.cmake
                ${_cfgdir}/pamtest-config-version.cmake
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pamtest)
endif()

set(_gen "${CMAKE_BINARY_DIR}/install-gen")
install(CODE "
  set(PROJECT_VERSION \"${PROJECT_VERSION}\")
  set(PWRAP_PC_PAM \"${PWRAP_PC_PAM}\")
  set(PWRAP_PC_PAM_CFLAGS \"${PWRAP_PC_PAM_CFLAGS}\")
  set(CMAKE_INSTALL_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  if(IS_ABSOLUTE \"${CMAKE_INSTALL_LIBDIR}\")
    set(CMAKE_INSTALL_FULL_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  else()
    set(CMAKE_INSTALL_FULL_LIBDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}\")
  endif()
  if(IS_ABSOLUTE \"${CMAKE_INSTALL_INCLUDEDIR}\")
    set(CMAKE_INSTALL_FULL_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
  else()
    set(CMAKE_INSTALL_FULL_INCLUDEDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_INCLUDEDIR}\")
  endif()
  set(PWRAP_FULL_MODDIR \"\${CMAKE_INSTALL_FULL_LIBDIR}/pam_wrapper\")
  foreach(_f pam_wrapper.pc libpamtest.pc)
    configure_file(\"${CMAKE_SOURCE_DIR}/cmake/\${_f}.in\" \"${_gen}/\${_f}\" @ONLY)
  endforeach()
")
install(FILES ${_gen}/pam_wrapper.pc ${_gen}/libpamtest.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
