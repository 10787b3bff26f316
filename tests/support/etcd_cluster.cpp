#include "tests/support/etcd_cluster.h"

#include <sys/wait.h>

#include <csignal>
#include <cstdio>
#include <stdexcept>

#include "tests/support/free_port.h"
#include "tests/support/http_client.h"

namespace santral::test {

EtcdCluster::EtcdCluster(int members, bool peers_through_proxy) : members_(members) {
  for (int i = 0; i < members; ++i) {
    members_[i].client_port = free_loopback_port();
    members_[i].peer_port = free_loopback_port();
  }
  // The address each member is reached at by the others: its own, or its proxy link's.
  std::vector<int> reached_at;
  if (peers_through_proxy) {
    std::vector<std::pair<std::string, int>> links;
    for (int i = 0; i < members; ++i)
      links.emplace_back("m" + std::to_string(i), members_[i].peer_port);
    peer_proxy_ = std::make_unique<FaultProxy>(links);
    for (int i = 0; i < members; ++i)
      reached_at.push_back(peer_proxy_->port("m" + std::to_string(i)));
  } else {
    for (int i = 0; i < members; ++i) reached_at.push_back(members_[i].peer_port);
  }
  std::string initial;
  for (int i = 0; i < members; ++i)
    initial += (i ? "," : "") + std::string("m") + std::to_string(i) +
               "=http://127.0.0.1:" + std::to_string(reached_at[i]);
  for (int i = 0; i < members; ++i) {
    std::string name = "m" + std::to_string(i);
    std::string client = "http://127.0.0.1:" + std::to_string(members_[i].client_port);
    std::string listen_peer = "http://127.0.0.1:" + std::to_string(members_[i].peer_port);
    std::string peer = "http://127.0.0.1:" + std::to_string(reached_at[i]);
    std::vector<std::string> argv = {"/usr/bin/etcd", "--name", name, "--data-dir",
                                     (dir_.path() / name).string()};
    for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
             {"--listen-client-urls", client},
             {"--advertise-client-urls", client},
             {"--listen-peer-urls", listen_peer},
             {"--initial-advertise-peer-urls", peer},
             {"--initial-cluster", initial},
             {"--initial-cluster-state", "new"},
             {"--initial-cluster-token", "santral-test-" + std::to_string(members_[0].client_port)},
             // Quicker than the default 100/1000 ms, for tests whose leases last 2-3 s.
             {"--heartbeat-interval", "50"},
             {"--election-timeout", "500"},
             {"--log-level", "warn"}}) {
      argv.push_back(flag);
      argv.push_back(value);
    }
    members_[i].process = std::make_unique<Process>(argv, (dir_.path() / (name + ".log")).string());
  }
  for (int i = 0; i < members; ++i)
    if (!wait_until([&] { return healthy(i); }, 20000))
      throw std::runtime_error("etcd member " + std::to_string(i) +
                               " did not become healthy: " + members_[i].process->log());
}

void EtcdCluster::partition_peers() {
  peer_proxy_->fault("*", "reset");
}

void EtcdCluster::heal_peers() {
  peer_proxy_->fault("*", "pass");
}

bool EtcdCluster::healthy(int member) const {
  try {
    auto response = http_request(members_[member].client_port, "GET", "/health");
    return response.status == 200 && response.body.find("\"true\"") != std::string::npos;
  } catch (const std::exception&) {
    return false;  // not listening yet
  }
}

std::string EtcdCluster::cluster_yaml(const std::string& name, const std::string& more) const {
  std::string text = "cluster:\n  name: " + name + "\n  etcd: [";
  for (std::size_t i = 0; i < members_.size(); ++i)
    text += (i ? ", " : "") + std::string("127.0.0.1:") + std::to_string(members_[i].client_port);
  return text + "]\n" + more;
}

std::string EtcdCluster::endpoints() const {
  std::string text;
  for (std::size_t i = 0; i < members_.size(); ++i)
    text += (i ? "," : "") + std::string("127.0.0.1:") + std::to_string(members_[i].client_port);
  return text;
}

void EtcdCluster::kill(int member) {
  members_[member].process->signal(SIGKILL);
}
void EtcdCluster::pause(int member) {
  members_[member].process->pause();
}
void EtcdCluster::resume(int member) {
  members_[member].process->resume();
}
void EtcdCluster::kill_all() {
  for (std::size_t i = 0; i < members_.size(); ++i)
    if (members_[i].process->running()) kill(static_cast<int>(i));
}

std::string EtcdCluster::etcdctl(const std::vector<std::string>& args,
                                 const std::string& input) const {
  auto in = dir_.path() / "etcdctl.in";
  {
    std::FILE* file = std::fopen(in.c_str(), "w");
    std::fwrite(input.data(), 1, input.size(), file);
    std::fclose(file);
  }
  std::string command = "ETCDCTL_API=3 /usr/bin/etcdctl --endpoints=" + endpoints();
  for (const auto& arg : args) command += " '" + arg + "'";
  command += " < '" + in.string() + "' 2>&1";
  std::string output;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  int status = ::pclose(pipe);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("etcdctl failed: " + command + ": " + output);
  return output;
}

// The value comes on stdin: etcdctl put reads it there when no value argument is given.
void EtcdCluster::put(const std::string& key, const std::string& value) const {
  etcdctl({"put", key}, value);
}

std::string EtcdCluster::get(const std::string& key) const {
  return etcdctl({"get", "--print-value-only", key});
}

std::string EtcdCluster::get_json(const std::string& key) const {
  return etcdctl({"get", "-w", "json", key});
}

}  // namespace santral::test
