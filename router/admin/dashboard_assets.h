#pragma once

#include <span>
#include <string_view>

namespace santral::router {

// One file of the operator's dashboard, compiled into the binary at build time from
// router/admin/dashboard/ (router/admin/dashboard/embed.cmake).
struct DashboardAsset {
  std::string_view path;  // "/" for index.html, else "/<file name>"
  std::string_view content_type;
  std::string_view body;
};

std::span<const DashboardAsset> dashboard_assets();
// The file served at `path`, or nullptr.
const DashboardAsset* find_dashboard_asset(std::string_view path);

}  // namespace santral::router
