# Precompiled headers: the heavy headers every translation unit used to parse again (the
# standard library's, fmt, yaml-cpp, Asio, spdlog, nlohmann/json, Catch2) are parsed once per
# group of targets.
#
#   santral_pch_group(<group> HEADERS <header>... FLAGS <target>...)
#   santral_precompiled(<target> <group>)
#
# CMakeLists.txt makes the groups `core` (protocol/, config/, the balancer, merges, metrics,
# the tools built on them) and `router` (the router's libraries and executables: adds Asio,
# spdlog, nlohmann/json); tests/CMakeLists.txt makes `tests` (every test executable: adds
# Catch2 and hiredis).
#
# A precompiled header serves only translation units compiled with the same definitions. So a
# group is an owner (santral_pch_<group>, an object library that builds the header and nothing
# else) and an interface (santral_pch_<group>_flags, linking FLAGS) that gives the owner and
# every member the same definitions; members reuse the owner's header (REUSE_FROM). GCC warns
# (-Winvalid-pch) and clang stops where a member's definitions differ.
# -DSANTRAL_PCH=OFF turns them off (the default with clang, see CMakeLists.txt; scripts/lint.sh
# too: clang-tidy reads each file as it is written); then a group is only its interface.

# With SANTRAL_FUZZ the targets in SANTRAL_FUZZED (the libraries the fuzz targets reach, and the
# fuzz targets) compile with libFuzzer's coverage (-fsanitize=fuzzer-no-link), which clang
# requires of the precompiled header too: each group has a twin built that way
# (santral_pch_<group>_fuzzed), and santral_precompiled() gives those targets the twin.

function(santral_pch_group group)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "HEADERS;FLAGS")
  add_library(santral_pch_${group}_flags INTERFACE)
  target_link_libraries(santral_pch_${group}_flags INTERFACE ${arg_FLAGS})
  set(santral_pch_${group}_headers ${arg_HEADERS} PARENT_SCOPE)
  set(variants ${group})
  if(SANTRAL_FUZZ)
    add_library(santral_pch_${group}_fuzzed_flags INTERFACE)
    target_link_libraries(santral_pch_${group}_fuzzed_flags INTERFACE santral_pch_${group}_flags)
    target_compile_options(santral_pch_${group}_fuzzed_flags INTERFACE -fsanitize=fuzzer-no-link)
    list(APPEND variants ${group}_fuzzed)
  endif()
  if(CMAKE_DISABLE_PRECOMPILE_HEADERS)
    return()
  endif()
  foreach(variant IN LISTS variants)
    add_library(santral_pch_${variant} OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch_owner.cpp)
    target_link_libraries(santral_pch_${variant} PRIVATE santral_pch_${variant}_flags)
    target_precompile_headers(santral_pch_${variant} PRIVATE ${arg_HEADERS})
  endforeach()
endfunction()

function(santral_precompiled target group)
  if(SANTRAL_FUZZ AND target IN_LIST SANTRAL_FUZZED)
    set(group ${group}_fuzzed)
  endif()
  target_link_libraries(${target} PRIVATE santral_pch_${group}_flags)
  if(NOT CMAKE_DISABLE_PRECOMPILE_HEADERS)
    target_precompile_headers(${target} REUSE_FROM santral_pch_${group})
  endif()
endfunction()
