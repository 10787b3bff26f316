#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "router/transport/tls_contexts.h"

namespace santral::router {

// What Redis Sentinel says of one master: its primary, and the replicas it sees up and linked
// to that primary.
struct SentinelView {
  config::Endpoint primary;
  std::vector<config::Endpoint> replicas;
  std::string sentinel;  // the one that answered
  // The primary's INFO replication, read with its ROLE when it was confirmed (what it took
  // over when promoted: router/backend/primary_lineage.h); or why it could not be read.
  std::string replication;
  std::string replication_error;
};

// Asks the sentinels in turn until one answers: SENTINEL GET-MASTER-ADDR-BY-NAME and SENTINEL
// REPLICAS; then the primary itself must answer ROLE as a master (Santral follows Sentinel's
// elections, it never makes one, and never sends writes to a server that is not a primary
// yet), unless it is `confirmed` already (the one asked before, every 250 ms); INFO
// replication goes with ROLE (SentinelView::replication). ROLE goes over
// TLS when `tls` is given (the shard has `tls: true`). nullopt and `error` (what each sentinel
// said) otherwise. Blocking: for the config loader and the server's Sentinel thread.
std::optional<SentinelView> ask_sentinels(const config::SentinelSettings& sentinel,
                                          const std::string& master,
                                          const config::BackendOptions& backend,
                                          const TlsContexts* tls, std::chrono::milliseconds timeout,
                                          std::string& error, const std::string& confirmed = "");

// The contexts ROLE checks of `config`'s `tls: true` shards that follow Sentinel use; null
// when there is none. Throws ConfigError naming backend.tls when the files cannot be used.
TlsContextsPtr sentinel_tls(const config::Config& config);

// Every shard of `config` naming a sentinel_master gets the primary and replicas Sentinel
// names for it. A master no sentinel knows, or no sentinel answering, is a ConfigError on the
// shard's line (key shards[i].sentinel_master), so a reload keeps the old config serving.
// Shards already asked (a port other than the placeholder's 0) are left as they are.
void resolve_sentinel_shards(config::Config& config);

// The same for a map that came from the fleet (etcd): its shards name masters, not addresses.
// A master `current` serves already keeps the primary and replicas followed so far (no
// question asked); a new one is asked. Throws ConfigError as resolve_sentinel_shards().
void keep_sentinel_shards(config::Config& next, const config::Config& current);

}  // namespace santral::router
