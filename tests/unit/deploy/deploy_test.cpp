// No Docker engine runs here, so the deploy files are checked rather than run: the compose
// file's topology, every file it and the Dockerfiles name, and the routers' shared config.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
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
  for (const auto& service : services) {
    auto name = service.first.as<std::string>();
    if (auto depends = resolved(service.second)["depends_on"])
      for (const auto& dependency : depends) CHECK(services[dependency.as<std::string>()]);
  }
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
