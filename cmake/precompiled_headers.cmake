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

function(santral_pch_group group)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "HEADERS;FLAGS")
  add_library(santral_pch_${group}_flags INTERFACE)
  target_link_libraries(santral_pch_${group}_flags INTERFACE ${arg_FLAGS})
  set(santral_pch_${group}_headers ${arg_HEADERS} PARENT_SCOPE)
  if(CMAKE_DISABLE_PRECOMPILE_HEADERS)
    return()
  endif()
  add_library(santral_pch_${group} OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch_owner.cpp)
  target_link_libraries(santral_pch_${group} PRIVATE santral_pch_${group}_flags)
  target_precompile_headers(santral_pch_${group} PRIVATE ${arg_HEADERS})
endfunction()

function(santral_precompiled target group)
  target_link_libraries(${target} PRIVATE santral_pch_${group}_flags)
  if(NOT CMAKE_DISABLE_PRECOMPILE_HEADERS)
    target_precompile_headers(${target} REUSE_FROM santral_pch_${group})
  endif()
endfunction()
