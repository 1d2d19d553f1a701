# Unity builds (NDT_UNITY=ON; `make build`, `make asan` and `make test` set it, a hand-configured
# tree has it off): each module's library files, and its test files, compile a few at a time as
# one translation unit, so the json/yaml/fmt/gtest headers and their templates are parsed and
# compiled once per group instead of once per file (BENCHMARKS.md, "CI time").
#
# The groups are not written down: cmake/unity_groups.py makes them at configure time, packing
# a target's files (sorted) first-fit into groups of at most NDT_UNITY_BATCH files in which no
# file declares a name that another declares or mentions (anonymous-namespace and static
# helpers, types, const variables, aliases and macros of a .cc; a same-named external function;
# a different using-directive). So two files whose helpers would collide, or whose helper
# would hide or overload a name the other uses, are never compiled together, and adding a file
# (a new src/<module>/foo.cc) needs nothing: the next configure places it where it clashes with
# nothing. CMake re-configures when a file of a unity target is added or edited.
#
# What a developer must do: nothing, normally. If a unity build fails where the plain build
# passes (a redefinition, or an ambiguous call, between two files of one group: the scanner
# missed a construct, e.g. a name made by a macro), rename the helper, or list the file in
# NDT_UNITY_ALONE below (compiled alone); `python3 cmake/unity_groups.py --check src/<m>/*.cc`
# prints the names the scanner sees shared between files. A plain build
# (cmake -DNDT_UNITY=OFF, the default) never groups anything.
set(NDT_UNITY_BATCH 8 CACHE STRING "Most .cc files per unity translation unit")
# Files never grouped (by name): the generated report_assets.cc, the inlined Vega JavaScript.
set(NDT_UNITY_ALONE report_assets.cc)

if(NDT_UNITY)
  # Debian's python3 (a pyenv shim first on PATH costs ~0.5 s a call, once per target).
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
endif()

# Called by ndt_module on each library and test target.
function(ndt_unity_target target)
  if(NOT NDT_UNITY)
    return()
  endif()
  get_target_property(srcs ${target} SOURCES)
  set(files "")
  foreach(f ${srcs})
    get_filename_component(fn "${f}" NAME)
    if(f MATCHES "\\.cc$" AND NOT fn IN_LIST NDT_UNITY_ALONE)
      list(APPEND files "${f}")
    endif()
  endforeach()
  set_property(DIRECTORY "${CMAKE_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${files}
               "${CMAKE_SOURCE_DIR}/cmake/unity_groups.py")
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" "${CMAKE_SOURCE_DIR}/cmake/unity_groups.py"
            --batch ${NDT_UNITY_BATCH} ${files}
    OUTPUT_VARIABLE lines RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake/unity_groups.py failed for ${target}")
  endif()
  string(REPLACE "\n" ";" lines "${lines}")
  foreach(line ${lines})
    if(line MATCHES "^([0-9]+) (.*)$")
      set_source_files_properties("${CMAKE_MATCH_2}" TARGET_DIRECTORY ${target}
                                  PROPERTIES UNITY_GROUP "${target}_${CMAKE_MATCH_1}")
    endif()
  endforeach()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
endfunction()

# The scanner on known cases (a helper that would hide another file's name, identical aliases
# that may share a group, ...): a second.
if(NDT_UNITY)
  add_test(NAME unity_groups
    COMMAND "${Python3_EXECUTABLE}" "${CMAKE_SOURCE_DIR}/cmake/unity_groups.py" --selftest)
endif()
