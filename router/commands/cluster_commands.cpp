#include "router/commands/cluster_commands.h"

#include <iterator>

#include <fmt/format.h>

#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/commands/cluster_topology.h"
#include "router/commands/local_reply.h"
#include "router/runtime/control_plane.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

using protocol::RespWriter;

namespace {

// The routers now: the fleet's live ones as this router last read them from etcd, or itself.
std::vector<ClusterNode> nodes_now(WorkerServices& worker) {
  std::vector<RouterRecord> routers;
  if (const ControlPlane* control = worker.shared().control)
    if (auto view = control->fleet_view()) routers = std::move(view->routers);
  return cluster_nodes(std::move(routers), own_record(worker.config()));
}

const ClusterNode& myself(const std::vector<ClusterNode>& nodes) {
  for (const auto& node : nodes)
    if (node.myself) return node;
  return nodes.front();
}

}  // namespace

void cluster_info(const Routed& r) {
  auto nodes = nodes_now(r.client.worker());
  std::size_t my_epoch = 1;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].myself) my_epoch = i + 1;
  std::string text = fmt::format(
      "cluster_state:ok\r\ncluster_slots_assigned:{0}\r\ncluster_slots_ok:{0}\r\n"
      "cluster_slots_pfail:0\r\ncluster_slots_fail:0\r\ncluster_known_nodes:{1}\r\n"
      "cluster_size:{1}\r\ncluster_current_epoch:{1}\r\ncluster_my_epoch:{2}\r\n"
      "cluster_stats_messages_sent:0\r\ncluster_stats_messages_received:0\r\n"
      "total_cluster_links_buffer_limit_exceeded:0\r\n",
      kClusterSlots, nodes.size(), my_epoch);
  answer(r, [&](RespWriter& w) { w.bulk(text); });
}

void cluster_slots(const Routed& r) {
  auto nodes = nodes_now(r.client.worker());
  answer(r, [&](RespWriter& w) {
    w.array_header(nodes.size());
    for (const auto& node : nodes) {
      w.array_header(3);
      w.integer(node.first_slot);
      w.integer(node.last_slot);
      w.array_header(4);  // preferred endpoint, port, id, other networking metadata (none)
      w.bulk(node.host);
      w.integer(node.port);
      w.bulk(node.id);
      w.map_header(0);
    }
  });
}

void cluster_shards(const Routed& r) {
  auto nodes = nodes_now(r.client.worker());
  answer(r, [&](RespWriter& w) {
    w.array_header(nodes.size());
    for (const auto& node : nodes) {
      w.map_header(2);
      w.bulk("slots");
      w.array_header(2);
      w.integer(node.first_slot);
      w.integer(node.last_slot);
      w.bulk("nodes");
      w.array_header(1);
      w.map_header(7);
      w.bulk("id");
      w.bulk(node.id);
      w.bulk("port");
      w.integer(node.port);
      w.bulk("ip");
      w.bulk(node.host);
      w.bulk("endpoint");
      w.bulk(node.host);
      w.bulk("role");
      w.bulk("master");
      w.bulk("replication-offset");
      w.integer(0);
      w.bulk("health");
      w.bulk("online");
    }
  });
}

void cluster_nodes(const Routed& r) {
  auto nodes = nodes_now(r.client.worker());
  std::string text;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto& node = nodes[i];
    fmt::format_to(std::back_inserter(text), "{} {}:{}@{} {} - 0 0 {} connected {}-{}\n", node.id,
                   node.host, node.port, node.port + 10000,
                   node.myself ? "myself,master" : "master", i + 1, node.first_slot,
                   node.last_slot);
  }
  answer(r, [&](RespWriter& w) { w.bulk(text); });
}

void cluster_myid(const Routed& r) {
  auto nodes = nodes_now(r.client.worker());
  answer(r, [&](RespWriter& w) { w.bulk(myself(nodes).id); });
}

void cluster_myshardid(const Routed& r) {
  auto nodes = nodes_now(r.client.worker());
  answer(r, [&](RespWriter& w) { w.bulk(myself(nodes).shard_id); });
}

void cluster_keyslot(const Routed& r) {
  answer(r, [&](RespWriter& w) { w.integer(cluster_key_slot(r.request.args[2])); });
}

void asking(const Routed& r) {
  r.client.reply("+OK\r\n");
}

}  // namespace santral::router
