# Helpers every test directory uses, so that all tests see the same
# environment and so that tests that exercise the wrapper also run as an
# unprivileged user when the suite runs as root (the "no root needed" proof).
#
#   pwrap_add_test(NAME n COMMAND cmd... [ENVIRONMENT k=v...] [LABELS l...]
#                  [NOBODY] [TIMEOUT s] [WORKING_DIRECTORY d])
#
# TIMEOUT is ctest's hang detector: PWRAP_TEST_TIMEOUT (an hour) unless a
# test asks for more, never less.  No test may depend on how fast the
# machine is: a loaded CI machine (ctest -j4 on two busy cores) takes many
# times longer than an idle one, honestly; inside the tests, waits are
# bounded by TU_HANG_SECONDS (C) and HANG (pytest), 600 s.
#
# NOBODY adds a twin test "n.nobody" run through setpriv as nobody:nogroup when
# CMake was configured as root, with nobody's USER, LOGNAME and HOME (so its
# pytest basetemp is $TMPDIR/pytest-of-nobody).  Every test gets:
#   PWRAP_BUILD_DIR     top of the build tree
#   PWRAP_SOURCE_DIR    top of the source tree
#   PWRAP_LIB           path of the built libpam_wrapper.so
#   PWRAP_PRELOAD       what to put in LD_PRELOAD to wrap a process
#                       (includes the sanitizer runtime in PWRAP_SANITIZE builds)
#   PWRAP_MODULE_DIR    directory of our built PAM modules
#   PWRAP_SYSTEM_MODULE_DIR  Linux-PAM's module directory
#   PWRAP_PAM_KIND      Linux-PAM or OpenPAM (the implementation built against)
#   PYTHONPATH          our built pypamtest first
#   TMPDIR              a directory every test user may write to
# Tests must not set LD_PRELOAD globally; they preload only the process they wrap.
# LABELS once: the test does not depend on the build around it (it builds
# what it needs itself): scripts/test.sh runs it in the normal build only.

execute_process(COMMAND id -u OUTPUT_VARIABLE PWRAP_CONFIGURE_UID
                OUTPUT_STRIP_TRAILING_WHITESPACE)
find_program(SETPRIV_EXECUTABLE setpriv)
set(PWRAP_RUN_AS_NOBODY OFF)
if(PWRAP_CONFIGURE_UID STREQUAL "0" AND SETPRIV_EXECUTABLE)
  set(PWRAP_RUN_AS_NOBODY ON)
  # The twins' own login environment (setpriv keeps the caller's): with
  # sudo's USER=root, pytest would pick root's basetemp
  # ($TMPDIR/pytest-of-root) for nobody too, and whichever of the two runs
  # made it first would lock the other out.
  execute_process(COMMAND getent passwd nobody OUTPUT_VARIABLE _nb_pw
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(PWRAP_NOBODY_HOME /nonexistent)
  if(_nb_pw MATCHES "^nobody:[^:]*:[^:]*:[^:]*:[^:]*:([^:]+):")
    set(PWRAP_NOBODY_HOME "${CMAKE_MATCH_1}")
  endif()
  set(PWRAP_NOBODY_ENV USER=nobody LOGNAME=nobody "HOME=${PWRAP_NOBODY_HOME}")
endif()

set(PWRAP_LIB "${PWRAP_OUT_LIBDIR}/libpam_wrapper.so")
set(PWRAP_PRELOAD "${PWRAP_LIB}")
set(PWRAP_SAN_ENV "")
if(PWRAP_SANITIZE)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
                  OUTPUT_VARIABLE _asan OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libubsan.so
                  OUTPUT_VARIABLE _ubsan OUTPUT_STRIP_TRAILING_WHITESPACE)
  get_filename_component(_asan "${_asan}" REALPATH)
  get_filename_component(_ubsan "${_ubsan}" REALPATH)
  set(PWRAP_SANITIZER_PRELOAD "${_asan}:${_ubsan}")
  set(PWRAP_PRELOAD "${PWRAP_SANITIZER_PRELOAD}:${PWRAP_LIB}")
  # Uninstrumented programs (pamtester, sshd, python) get the runtime by
  # preload; leaks inside python/libpam/ssh are not ours to chase here.
  list(APPEND PWRAP_SAN_ENV
       "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0:abort_on_error=0"
       "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()

set(_pamdir "${PWRAP_PAM_REAL_DIR}")
if(PWRAP_OPENPAM)
  # OpenPAM: openpam/ next to libpam (--with-modules-dir), else libpam's dir
  if(IS_DIRECTORY "${_pamdir}/openpam")
    set(PWRAP_SYSTEM_MODULE_DIR "${_pamdir}/openpam")
  else()
    set(PWRAP_SYSTEM_MODULE_DIR "${_pamdir}")
  endif()
else()
  set(PWRAP_SYSTEM_MODULE_DIR "${_pamdir}/security")
endif()

set(PWRAP_TEST_TMPDIR "/tmp")

set(PWRAP_TEST_TIMEOUT 3600)

function(pwrap_add_test)
  cmake_parse_arguments(T "NOBODY" "NAME;TIMEOUT;WORKING_DIRECTORY"
                        "COMMAND;ENVIRONMENT;LABELS" ${ARGN})
  if(NOT T_TIMEOUT OR T_TIMEOUT LESS PWRAP_TEST_TIMEOUT)
    set(T_TIMEOUT ${PWRAP_TEST_TIMEOUT})
  endif()
  if(NOT T_WORKING_DIRECTORY)
    set(T_WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
  endif()
  set(_env
      "PWRAP_BUILD_DIR=${CMAKE_BINARY_DIR}"
      "PWRAP_SOURCE_DIR=${CMAKE_SOURCE_DIR}"
      "PWRAP_LIB=${PWRAP_LIB}"
      "PWRAP_PRELOAD=${PWRAP_PRELOAD}"
      "PWRAP_MODULE_DIR=${PWRAP_OUT_MODDIR}"
      "PWRAP_SYSTEM_MODULE_DIR=${PWRAP_SYSTEM_MODULE_DIR}"
      "PWRAP_BIN_DIR=${PWRAP_OUT_BINDIR}"
      "PWRAP_PAM_KIND=${PWRAP_PAM_KIND}"
      "PYTHONPATH=${CMAKE_BINARY_DIR}/python"
      "PYTHONDONTWRITEBYTECODE=1"
      "TMPDIR=${PWRAP_TEST_TMPDIR}"
      ${PWRAP_SAN_ENV}
      ${T_ENVIRONMENT})
  add_test(NAME ${T_NAME} COMMAND ${T_COMMAND}
           WORKING_DIRECTORY "${T_WORKING_DIRECTORY}")
  set_tests_properties(${T_NAME} PROPERTIES ENVIRONMENT "${_env}"
                       TIMEOUT ${T_TIMEOUT} LABELS "${T_LABELS}")
  if(T_NOBODY AND PWRAP_RUN_AS_NOBODY)
    add_test(NAME ${T_NAME}.nobody
             COMMAND ${SETPRIV_EXECUTABLE} --reuid=nobody --regid=nogroup
                     --clear-groups ${T_COMMAND}
             WORKING_DIRECTORY "${PWRAP_TEST_TMPDIR}")
    # valgrind would only see setpriv: the twin is not a memcheck test.
    set(_twin_labels ${T_LABELS})
    list(REMOVE_ITEM _twin_labels memcheck)
    set_tests_properties(${T_NAME}.nobody PROPERTIES
                         ENVIRONMENT "${_env};${PWRAP_NOBODY_ENV};PWRAP_AS_NOBODY=1"
                         TIMEOUT ${T_TIMEOUT} LABELS "${_twin_labels};nobody")
  endif()
endfunction()

# A cmocka test binary built from SOURCES and registered with pwrap_add_test.
function(pwrap_add_cmocka_test name)
  cmake_parse_arguments(T "NOBODY" "TIMEOUT" "SOURCES;LIBS;ENVIRONMENT;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${CMOCKA_LIBRARY} ${T_LIBS})
  target_include_directories(${name} PRIVATE ${CMOCKA_INCLUDE_DIR})
  set(_nb "")
  if(T_NOBODY)
    set(_nb NOBODY)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT ${PWRAP_TEST_TIMEOUT})
  endif()
  pwrap_add_test(NAME ${name} COMMAND $<TARGET_FILE:${name}> ${_nb}
                 TIMEOUT ${T_TIMEOUT}
                 ENVIRONMENT ${T_ENVIRONMENT} LABELS ${T_LABELS})
endfunction()

if(BUILD_TESTING)
  # What the tests need, said in one line when missing.
  if(Python3_EXECUTABLE)
    set(PWRAP_TEST_PYTHON "${Python3_EXECUTABLE}")
  elseif(EXISTS /usr/bin/python3)
    set(PWRAP_TEST_PYTHON /usr/bin/python3)
  else()
    set(PWRAP_TEST_PYTHON python3)
  endif()
  find_library(CMOCKA_LIBRARY NAMES cmocka)
  find_path(CMOCKA_INCLUDE_DIR cmocka.h)
  set(_missing "")
  if(NOT CMOCKA_LIBRARY OR NOT CMOCKA_INCLUDE_DIR)
    list(APPEND _missing "cmocka (Debian: libcmocka-dev)")
  endif()
  execute_process(COMMAND "${PWRAP_TEST_PYTHON}" -c "import pytest"
                  RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT _rc EQUAL 0)
    list(APPEND _missing "pytest for ${PWRAP_TEST_PYTHON} (Debian: python3-pytest)")
  endif()
  if(_missing)
    string(REPLACE ";" ", " _missing "${_missing}")
    message(FATAL_ERROR "The tests (BUILD_TESTING=ON) need ${_missing}; "
                        "install it (scripts/install-deps.sh) or configure without -DBUILD_TESTING=ON")
  endif()
endif()
