#include "router/merge/per_shard_merge.h"

#include "protocol/resp_writer.h"

namespace santral::router {
namespace {

class PerShardMerge final : public ReplyMerge {
 public:
  PerShardMerge(std::vector<std::string> names, int protocol)
      : names_(std::move(names)), replies_(names_.size()), protocol_(protocol) {}

  void add(std::uint32_t fragment, std::string_view reply) override {
    if (fragment < replies_.size()) replies_[fragment].assign(reply);
  }

  void finish(std::string& out) override {
    protocol::RespWriter writer(out, protocol_);
    writer.map_header(names_.size());
    for (std::size_t i = 0; i < names_.size(); ++i) {
      writer.bulk(names_[i]);
      out += replies_[i];
    }
  }

 private:
  std::vector<std::string> names_;
  std::vector<std::string> replies_;
  int protocol_;
};

}  // namespace

std::unique_ptr<ReplyMerge> per_shard_merge(std::vector<std::string> shard_names, int protocol) {
  return std::make_unique<PerShardMerge>(std::move(shard_names), protocol);
}

}  // namespace santral::router
