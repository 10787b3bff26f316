#include "router/resharding/state_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

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

std::filesystem::path state_file_path(const std::filesystem::path& config_path,
                                      const std::filesystem::path& state_file,
                                      std::string_view default_suffix) {
  if (state_file.empty()) {
    auto path = config_path;
    path += std::string(default_suffix);
    return path;
  }
  if (state_file.is_relative()) return config_path.parent_path() / state_file;
  return state_file;
}

std::optional<std::string> read_state_file(const std::filesystem::path& path, std::string& error) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) && !ec) return std::nullopt;
  std::ifstream in(path);
  if (ec || !in || std::filesystem::is_directory(path, ec)) {
    error = ec ? ec.message() : std::strerror(errno);
    return std::nullopt;
  }
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

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
