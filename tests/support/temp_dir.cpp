#include "tests/support/temp_dir.h"

#include <stdlib.h>

#include <fstream>
#include <stdexcept>

namespace santral::test {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "santral-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::filesystem::path TempDir::write(const std::string& name, const std::string& text) const {
  auto file = path_ / name;
  std::ofstream out(file, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("could not write " + file.string());
  return file;
}

}  // namespace santral::test
