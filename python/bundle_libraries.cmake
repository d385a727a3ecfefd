# Install step of the wheel (PROFINJECT_WHEEL): the shared libraries the
# installed launcher and analyzer need, other than glibc's, copied under
# their sonames into lib/profinject/, where the analyzer's rpath
# ($ORIGIN/../lib/profinject) finds them, and libunwind.so.8, which the
# library opens beside itself for native call stacks (PI_UNWIND: its path).
# tools/package's tarball carries the same set. Each finds the others beside
# it (RUNPATH $ORIGIN, patchelf), as auditwheel checks it and as libunwind
# needs its liblzma when the library opens it.
find_program(PATCHELF patchelf REQUIRED)
set(private "${CMAKE_INSTALL_PREFIX}/lib/profinject")
file(GET_RUNTIME_DEPENDENCIES
  EXECUTABLES "${CMAKE_INSTALL_PREFIX}/bin/profinject-analyze" "${CMAKE_INSTALL_PREFIX}/bin/profinject"
  RESOLVED_DEPENDENCIES_VAR resolved
  UNRESOLVED_DEPENDENCIES_VAR unresolved
  # glibc's own libraries stay the system's: they must match its loader
  PRE_EXCLUDE_REGEXES "^(libc|libm|libdl|libpthread|librt|libresolv|libutil)\\.so" "^ld-linux")
if(unresolved)
  message(FATAL_ERROR "profinject: the analyzer needs ${unresolved}, which were not found")
endif()
foreach(path IN LISTS resolved PI_UNWIND)
  get_filename_component(soname "${path}" NAME)
  if(soname STREQUAL "libunwind.so")
    set(soname libunwind.so.8)
  endif()
  file(REAL_PATH "${path}" real)
  message(STATUS "Bundling: ${private}/${soname} (${real})")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E copy "${real}" "${private}/${soname}"
    COMMAND_ERROR_IS_FATAL ANY)
  execute_process(COMMAND "${PATCHELF}" --set-rpath "$ORIGIN" "${private}/${soname}"
    COMMAND_ERROR_IS_FATAL ANY)
endforeach()
