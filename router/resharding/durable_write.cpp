#include "router/resharding/durable_write.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

namespace santral::router {

namespace {

// fsync of a file or a folder by its path: "" or the reason.
std::string sync_path(const std::filesystem::path& path, bool folder) {
  int fd = ::open(path.c_str(), folder ? O_RDONLY | O_DIRECTORY : O_WRONLY);
  if (fd < 0) return std::strerror(errno);
  int result = ::fsync(fd);
  int error = errno;
  ::close(fd);
  return result == 0 ? std::string() : std::strerror(error);
}

}  // namespace

std::string write_durably(const std::filesystem::path& path, std::string_view text) {
  auto temporary = path;
  temporary += ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    if (!out) return fmt::format("cannot write {}", temporary.string());
    out << text;
    out.flush();
    if (!out) return fmt::format("cannot write {}", temporary.string());
  }
  if (auto error = sync_path(temporary, false); !error.empty()) return "fsync: " + error;
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) return ec.message();
  auto folder = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  if (auto error = sync_path(folder, true); !error.empty()) return "fsync of its folder: " + error;
  return {};
}

}  // namespace santral::router
