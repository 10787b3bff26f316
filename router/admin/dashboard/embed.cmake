# Compiles the dashboard's files into the binary: writes OUTPUT, a C++ source holding every
# *.html, *.js and *.css of SOURCE_DIR as bytes, served at /<file name> (index.html at /).
#   cmake -DSOURCE_DIR=router/admin/dashboard -DOUTPUT=build/.../dashboard_assets.cpp -P embed.cmake
# Run by the build (router/CMakeLists.txt); the output lives in the build tree only.
file(GLOB files RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/*.html ${SOURCE_DIR}/*.js ${SOURCE_DIR}/*.css)
list(SORT files)
set(arrays "")
set(entries "")
set(index 0)
foreach(name IN LISTS files)
  file(READ ${SOURCE_DIR}/${name} hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "((0x..,){24})" "\\1\n    " bytes "${bytes}")
  string(APPEND arrays "const unsigned char kFile${index}[] = {\n    ${bytes}0x00};\n")
  if(name MATCHES "\\.html$")
    set(type "text/html; charset=utf-8")
  elseif(name MATCHES "\\.js$")
    set(type "text/javascript; charset=utf-8")
  else()
    set(type "text/css; charset=utf-8")
  endif()
  set(path "/${name}")
  if(name STREQUAL "index.html")
    set(path "/")
  endif()
  # The arrays end in a NUL that is not served.
  string(APPEND entries "    {\"${path}\", \"${type}\", {reinterpret_cast<const char*>(kFile${index}), sizeof kFile${index} - 1}},\n")
  math(EXPR index "${index} + 1")
endforeach()
file(WRITE ${OUTPUT}.new "// Generated from router/admin/dashboard/ by embed.cmake at build time; not committed.
#include \"router/admin/dashboard_assets.h\"

#include <algorithm>

namespace santral::router {

namespace {

${arrays}
const DashboardAsset kAssets[] = {
${entries}};

}  // namespace

std::span<const DashboardAsset> dashboard_assets() { return kAssets; }

const DashboardAsset* find_dashboard_asset(std::string_view path) {
  auto it = std::find_if(std::begin(kAssets), std::end(kAssets),
                         [path](const DashboardAsset& asset) { return asset.path == path; });
  return it == std::end(kAssets) ? nullptr : &*it;
}

}  // namespace santral::router
")
# Only a changed output is rewritten, so that an unchanged dashboard recompiles nothing.
file(COPY_FILE ${OUTPUT}.new ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.new)
