# Install-time metadata: pkg-config files and CMake package configs for
# pam_wrapper (the preload library) and pamtest (libpamtest).  The paths are
# absolute because users put `pkg-config --libs pam_wrapper` straight into
# LD_PRELOAD, as they do with nss_wrapper and uid_wrapper.
include(CMakePackageConfigHelpers)

set(PWRAP_FULL_MODDIR "${CMAKE_INSTALL_FULL_LIBDIR}/pam_wrapper")

configure_file(${CMAKE_SOURCE_DIR}/cmake/pam_wrapper.pc.in
               ${CMAKE_BINARY_DIR}/pam_wrapper.pc @ONLY)
configure_file(${CMAKE_SOURCE_DIR}/cmake/libpamtest.pc.in
               ${CMAKE_BINARY_DIR}/libpamtest.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/pam_wrapper.pc ${CMAKE_BINARY_DIR}/libpamtest.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

configure_file(${CMAKE_SOURCE_DIR}/cmake/pam_wrapper-config.cmake.in
               ${CMAKE_BINARY_DIR}/pam_wrapper-config.cmake @ONLY)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/pam_wrapper-config-version.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/pam_wrapper-config.cmake
              ${CMAKE_BINARY_DIR}/pam_wrapper-config-version.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pam_wrapper)

if(TARGET pamtest)
  install(EXPORT pamtest-targets NAMESPACE pamtest::
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pamtest)
  configure_file(${CMAKE_SOURCE_DIR}/cmake/pamtest-config.cmake.in
                 ${CMAKE_BINARY_DIR}/pamtest-config.cmake @ONLY)
  write_basic_package_version_file(${CMAKE_BINARY_DIR}/pamtest-config-version.cmake
                                   COMPATIBILITY SameMajorVersion)
  install(FILES ${CMAKE_BINARY_DIR}/pamtest-config.cmake
                ${CMAKE_BINARY_DIR}/pamtest-config-version.cmake
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pamtest)
endif()
