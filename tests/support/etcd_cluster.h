#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tests/support/fault_proxy.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace santral::test {

// Real etcd members (etcd-server 3.4) on free 127.0.0.1 ports forming one cluster, for one
// test; ready when every member says it is healthy.
class EtcdCluster {
 public:
  // `peers_through_proxy`: the members reach each other through a fault proxy (one link per
  // member's peer port), so that a test can cut them apart: each stays up, answers clients,
  // and says it has no leader.
  explicit EtcdCluster(int members = 1, bool peers_through_proxy = false);

  // Cuts every member from the others (peers_through_proxy), or heals that.
  void partition_peers();
  void heal_peers();

  // `cluster:` for a Santral config naming every member, as top-level YAML.
  std::string cluster_yaml(const std::string& name, const std::string& more = "") const;
  std::string endpoints() const;  // "127.0.0.1:p1,127.0.0.1:p2,..." for etcdctl
  int client_port(int member) const { return members_[member].client_port; }

  void kill(int member);  // SIGKILL
  void pause(int member);
  void resume(int member);
  void kill_all();

  // etcdctl put/get through every member; throws when etcdctl fails.
  void put(const std::string& key, const std::string& value) const;
  std::string get(const std::string& key) const;
  std::string get_json(const std::string& key) const;  // etcdctl -w json: with its revisions

 private:
  struct Member {
    int client_port = 0;
    int peer_port = 0;
    std::unique_ptr<Process> process;
  };
  bool healthy(int member) const;
  std::string etcdctl(const std::vector<std::string>& args, const std::string& input = "") const;

  TempDir dir_;
  std::vector<Member> members_;
  std::unique_ptr<FaultProxy> peer_proxy_;
};

}  // namespace santral::test
