# Install-time metadata: pkg-config files and CMake package configs for
# pam_wrapper (the preload library) and pamtest (libpamtest).  The paths are
# absolute because users put `pkg-config --libs pam_wrapper` straight into
# LD_PRELOAD, as they do with nss_wrapper and uid_wrapper.  They are
# generated at install time, so `cmake --install --prefix P` gets P's paths.
include(CMakePackageConfigHelpers)

write_basic_package_version_file(${CMAKE_BINARY_DIR}/pam_wrapper-config-version.cmake
                                 COMPATIBILITY SameMajorVersion)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/pamtest-config-version.cmake
                                 COMPATIBILITY SameMajorVersion)

set(_gen "${CMAKE_BINARY_DIR}/install-gen")
install(CODE "
  set(PROJECT_VERSION \"${PROJECT_VERSION}\")
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
  foreach(_f pam_wrapper.pc libpamtest.pc pam_wrapper-config.cmake pamtest-config.cmake)
    configure_file(\"${CMAKE_SOURCE_DIR}/cmake/\${_f}.in\" \"${_gen}/\${_f}\" @ONLY)
  endforeach()
")
install(FILES ${_gen}/pam_wrapper.pc ${_gen}/libpamtest.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(FILES ${_gen}/pam_wrapper-config.cmake
              ${CMAKE_BINARY_DIR}/pam_wrapper-config-version.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pam_wrapper)

if(TARGET pamtest)
  install(EXPORT pamtest-targets NAMESPACE pamtest::
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pamtest)
  install(FILES ${_gen}/pamtest-config.cmake
                ${CMAKE_BINARY_DIR}/pamtest-config-version.cmake
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pamtest)
endif()
