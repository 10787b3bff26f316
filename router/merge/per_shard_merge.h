#pragma once

#include <memory>
#include <string>
#include <vector>

#include "router/merge/reply_merge.h"

namespace santral::router {

// Each shard's reply as it came, named: a map of shard name -> reply, in fragment order (a
// flat array of pairs for a RESP2 client). SANTRAL SHARD SLOWLOG's answer, where entries of
// different shards must not be mixed into one list.
std::unique_ptr<ReplyMerge> per_shard_merge(std::vector<std::string> shard_names, int protocol);

}  // namespace santral::router
