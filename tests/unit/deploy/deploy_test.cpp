// No Docker engine runs here, so the deploy files are checked rather than run: the compose
// file's topology, every file it and the Dockerfiles name, and the routers' shared config.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "config/config.h"

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = SANTRAL_SOURCE_DIR;
const fs::path kDeploy = kRoot / "deploy";

// yaml-cpp keeps YAML merge keys (<<) as plain keys; compose resolves them, so do the same.
YAML::Node resolved(const YAML::Node& service) {
  YAML::Node out = YAML::Clone(service);
  if (service["<<"]) {
    for (const auto& item : service["<<"])
      if (!out[item.first.as<std::string>()]) out[item.first.as<std::string>()] = item.second;
    out.remove("<<");
  }
  return out;
}

std::string text_of(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// The services a service depends on, in either of compose's forms (a list, or a map of names
// to conditions).
std::vector<std::string> dependencies(const YAML::Node& service) {
  std::vector<std::string> names;
  YAML::Node depends = service["depends_on"];
  if (!depends) return names;
  if (depends.IsMap())
    for (const auto& item : depends) names.push_back(item.first.as<std::string>());
  else
    for (const auto& item : depends) names.push_back(item.as<std::string>());
  return names;
}

// The COPY sources of a Dockerfile (without --from), relative to its build context.
std::vector<std::string> copy_sources(const std::string& dockerfile) {
  std::vector<std::string> sources;
  std::istringstream lines(dockerfile);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("COPY ", 0) != 0 || line.find("--from") != std::string::npos) continue;
    std::istringstream words(line.substr(5));
    std::vector<std::string> parts;
    for (std::string w; words >> w;) parts.push_back(w);
    parts.pop_back();  // the destination
    sources.insert(sources.end(), parts.begin(), parts.end());
  }
  return sources;
}

}  // namespace

TEST_CASE(
    "docker-compose: four shards each with a replica, three etcd members, two routers on one "
    "config, Chirp") {
  YAML::Node compose = YAML::LoadFile((kDeploy / "docker-compose.yml").string());
  YAML::Node services = compose["services"];
  REQUIRE(services.IsMap());
  for (int i = 0; i < 4; ++i) {
    std::string shard = "shard" + std::to_string(i);
    INFO(shard);
    REQUIRE(services[shard]);
    auto primary = resolved(services[shard]);
    CHECK(primary["image"].as<std::string>().rfind("redis:7", 0) == 0);
    auto replica = resolved(services[shard + "-replica"]);
    REQUIRE(replica["command"]);
    std::vector<std::string> command = replica["command"].as<std::vector<std::string>>();
    auto at = std::find(command.begin(), command.end(), "--replicaof");
    REQUIRE(at != command.end());
    CHECK(*(at + 1) == shard);
  }
  for (int i = 0; i < 3; ++i) {
    std::string member = "etcd" + std::to_string(i);
    INFO(member);
    REQUIRE(services[member]);
    auto etcd = resolved(services[member]);
    CHECK(etcd["image"].as<std::string>().find("etcd:v3.4") != std::string::npos);
    CHECK(resolved(etcd["environment"])["ETCD_INITIAL_CLUSTER"].as<std::string>().find(
              member + "=") != std::string::npos);
  }
  std::set<std::string> configs;
  for (std::string router : {"santral-a", "santral-b"}) {
    INFO(router);
    auto service = resolved(services[router]);
    REQUIRE(service["build"]);
    fs::path context = kDeploy / service["build"]["context"].as<std::string>();
    CHECK(fs::is_directory(context));
    CHECK(fs::is_regular_file(context / service["build"]["dockerfile"].as<std::string>()));
    for (const auto& volume : service["volumes"]) {
      std::string host = volume.as<std::string>().substr(0, volume.as<std::string>().find(':'));
      CHECK(fs::is_regular_file(kDeploy / host));
      configs.insert(volume.as<std::string>());
    }
  }
  CHECK(configs.size() == 1);  // both routers mount the same file at the same place
  CHECK(configs.begin()->find(":/etc/santral/santral.yaml") != std::string::npos);

  auto chirp = resolved(services["chirp"]);
  fs::path chirp_context = kDeploy / chirp["build"]["context"].as<std::string>();
  CHECK(fs::is_regular_file(chirp_context / chirp["build"]["dockerfile"].as<std::string>()));
  auto command = chirp["command"].as<std::vector<std::string>>();
  std::string routers = *(std::find(command.begin(), command.end(), "--routers") + 1);
  CHECK(routers.find("santral-a") != std::string::npos);
  CHECK(routers.find("santral-b") != std::string::npos);
  for (const auto& service : services)
    for (const auto& dependency : dependencies(resolved(service.second)))
      CHECK(services[dependency]);
}

TEST_CASE("docker-compose: step 4's fifth shard runs in the profile grow, and Chirp joins it") {
  YAML::Node services = YAML::LoadFile((kDeploy / "docker-compose.yml").string())["services"];
  for (std::string name : {"shard4", "shard4-replica"}) {
    INFO(name);
    REQUIRE(services[name]);
    auto service = resolved(services[name]);
    CHECK(service["image"].as<std::string>().rfind("redis:7", 0) == 0);
    REQUIRE(service["profiles"]);
    CHECK(service["profiles"].as<std::vector<std::string>>() == std::vector<std::string>{"grow"});
  }
  auto replica = resolved(services["shard4-replica"])["command"].as<std::vector<std::string>>();
  CHECK(*(std::find(replica.begin(), replica.end(), "--replicaof") + 1) == "shard4");
  // Every other service runs without a profile.
  for (const auto& service : services) {
    auto name = service.first.as<std::string>();
    if (name.rfind("shard4", 0) != 0) CHECK_FALSE(resolved(service.second)["profiles"]);
  }

  auto chirp = resolved(services["chirp"]);
  auto command = chirp["command"].as<std::vector<std::string>>();
  auto argument = [&](const std::string& flag) {
    auto at = std::find(command.begin(), command.end(), flag);
    return at == command.end() || at + 1 == command.end() ? std::string() : *(at + 1);
  };
  CHECK(argument("--join") == "shard4:6379+shard4-replica:6379");
  // The config Chirp proposes with shard4 is the routers' own, mounted where --config says.
  std::string config = argument("--config");
  REQUIRE_FALSE(config.empty());
  std::vector<std::string> volumes;
  for (const auto& volume : chirp["volumes"]) volumes.push_back(volume.as<std::string>());
  CHECK(volumes == std::vector<std::string>{"./santral.yaml:" + config + ":ro"});
  CHECK(argument("--admin") == "santral-a:8080,santral-b:8080");
  // Chirp starts after shard4's replica when the profile runs it, and without it otherwise.
  auto depends = chirp["depends_on"];
  REQUIRE(depends.IsMap());
  REQUIRE(depends["shard4-replica"]);
  CHECK_FALSE(depends["shard4-replica"]["required"].as<bool>());
  CHECK(depends["santral-a"]);
  CHECK(depends["santral-b"]);
}

TEST_CASE("the routers' shared config loads, and names only compose services") {
  auto config = santral::config::load_config(kDeploy / "santral.yaml");
  YAML::Node services = YAML::LoadFile((kDeploy / "docker-compose.yml").string())["services"];
  REQUIRE(config.shards.size() == 4);
  for (const auto& shard : config.shards) {
    INFO(shard.name);
    CHECK(services[shard.address.host]);
    REQUIRE(shard.replicas.size() == 1);
    CHECK(shard.replicas[0].host == shard.address.host + "-replica");
    CHECK(services[shard.replicas[0].host]);
  }
  CHECK(config.read_from == santral::config::ReadFrom::PreferReplica);
  CHECK(config.admin.listen.port == 8080);
  // The routers are one fleet on the compose file's three etcd members.
  REQUIRE(config.cluster.etcd.size() == 3);
  for (const auto& member : config.cluster.etcd) {
    INFO(member);
    CHECK(services[member.substr(0, member.find(':'))]);
  }
}

TEST_CASE("Dockerfiles: Debian 12, a non-root user, only the binary and a config in the image") {
  std::string santral = text_of(kDeploy / "Dockerfile");
  CHECK(std::regex_search(santral,
                          std::regex(R"(^FROM debian:12 AS build$)", std::regex::multiline)));
  CHECK(std::regex_search(santral, std::regex(R"(^FROM debian:12-slim$)", std::regex::multiline)));
  std::smatch user;
  REQUIRE(std::regex_search(santral, user, std::regex(R"(^USER (\S+)$)", std::regex::multiline)));
  CHECK(user[1] != "root");
  // The final stage takes exactly two things: the binary from the build stage, and a config.
  auto final_stage = santral.substr(santral.find("FROM debian:12-slim"));
  CHECK(std::regex_search(final_stage,
                          std::regex(R"(COPY --from=build \S+/santral /usr/local/bin/santral)")));
  CHECK(copy_sources(final_stage) == std::vector<std::string>{"deploy/santral.yaml"});
  for (const auto& source : copy_sources(santral)) {
    INFO(source);
    CHECK(fs::exists(kRoot / source));
  }
  std::string chirp = text_of(kDeploy / "chirp" / "Dockerfile");
  CHECK(chirp.find("FROM debian:12") != std::string::npos);
  CHECK(chirp.find("USER chirp") != std::string::npos);
  for (const auto& source : copy_sources(chirp)) CHECK(fs::exists(kRoot / source));
}

TEST_CASE("the santral image builds from what CMakeLists.txt needs") {
  std::string dockerfile = text_of(kDeploy / "Dockerfile");
  auto build_stage = dockerfile.substr(0, dockerfile.find("FROM debian:12-slim"));
  auto copied = copy_sources(build_stage);
  auto is_copied = [&](const std::string& path) {
    return std::any_of(copied.begin(), copied.end(), [&](const std::string& source) {
      return path == source || path.rfind(source + "/", 0) == 0;
    });
  };
  // Every directory and file the top-level CMakeLists.txt reads, but the tests (off in the image).
  std::string cmake = text_of(kRoot / "CMakeLists.txt");
  std::regex reads(R"((add_subdirectory|include|configure_file)\(([^ )]+))");
  int checked = 0;
  for (std::sregex_iterator it(cmake.begin(), cmake.end(), reads), end; it != end; ++it) {
    std::string path = (*it)[2];
    if (path == "tests") continue;
    // include(CheckLinkerFlag): one of CMake's own modules, not a file of the tree.
    bool cmake_module = (*it)[1] == "include" && path.find('/') == std::string::npos &&
                        path.find('.') == std::string::npos;
    if (cmake_module) continue;
    INFO(path);
    CHECK(is_copied(path));
    ++checked;
  }
  CHECK(checked >= 5);
  // A Debian package for every package CMake looks for (none where the image does not need one).
  const std::map<std::string, std::string> packages = {
      {"Threads", ""},
      {"OpenSSL", "libssl-dev"},
      {"Boost", "libboost1.81-dev"},
      {"fmt", "libfmt-dev"},
      {"spdlog", "libspdlog-dev"},
      {"nlohmann_json", "nlohmann-json3-dev"},
      {"yaml-cpp", "libyaml-cpp-dev"},
      {"CLI11", "libcli11-dev"},
      {"PkgConfig", "pkg-config"},
      {"Python3", "python3"},  // scripts/check-floors.py, run by the build
      {"libmd", "libmd-dev"},
  };
  std::regex wanted(
      R"((find_package\((\S+)|pkg_check_modules\(\S+ REQUIRED IMPORTED_TARGET (\S+)\)))");
  for (std::sregex_iterator it(cmake.begin(), cmake.end(), wanted), end; it != end; ++it) {
    std::string name = (*it)[2].matched ? (*it)[2].str() : (*it)[3].str();
    INFO(name << ": add its Debian package to deploy/Dockerfile and to this table");
    auto found = packages.find(name);
    REQUIRE(found != packages.end());
    if (!found->second.empty())
      CHECK(std::regex_search(build_stage, std::regex("\\s" + found->second + "\\s")));
  }
}
